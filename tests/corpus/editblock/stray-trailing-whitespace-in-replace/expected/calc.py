def total(items):
    s = 10
    count = 0
    for i in items:
        s += i
    return s
