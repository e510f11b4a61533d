first = 1
second = 2
last = 3
extra = 5
