import greet

greet.greet("world")
