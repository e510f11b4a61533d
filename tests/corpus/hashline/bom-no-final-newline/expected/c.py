name = 10
other = 20