keep = 1
keep2 = 3
