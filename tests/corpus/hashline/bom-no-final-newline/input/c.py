name = 1
other = 2