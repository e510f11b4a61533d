table = {}
# 12:ab|example of a tag
print(table)
print(len(table))
