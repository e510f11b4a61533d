msg = “it’s fine”
level = 4
