first = 1
second = 2
last = 3