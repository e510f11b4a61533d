print('old')
print('bye')
