msg = “it’s fine”
level = 3
