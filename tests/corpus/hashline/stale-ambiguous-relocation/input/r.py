# new first line
x = 0
reset()
y = 1
z = 2
reset()
w = 3
