x = 0
return x
x = 0
return x
