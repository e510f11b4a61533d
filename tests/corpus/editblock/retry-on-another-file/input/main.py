from helpers import slug

print(slug("A B"))
