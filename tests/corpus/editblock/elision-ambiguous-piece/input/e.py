def f(x):
    log(x)
    return x

def g(x):
    log(x)
    return x
