import greet

greet.greet()
