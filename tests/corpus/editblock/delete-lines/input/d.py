keep = 1
drop = 2
keep2 = 3
