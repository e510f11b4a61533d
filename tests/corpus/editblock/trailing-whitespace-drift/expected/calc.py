def total(items):   
    s = 10
    for i in items:
        s += i
    return s
