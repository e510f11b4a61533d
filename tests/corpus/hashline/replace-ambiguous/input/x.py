a = 1
print(a)
b = 2
print(a)
