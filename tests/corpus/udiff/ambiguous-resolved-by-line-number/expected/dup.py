def a():
    x = 1
    return x


def filler0():
    pass


def filler1():
    pass


def filler2():
    pass


def filler3():
    pass


def filler4():
    pass


def filler5():
    pass


def filler6():
    pass


def filler7():
    pass


def b():
    x = 1
    return x + 1
