def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def mean(values):
    if not values:
        return 0.0
    return sum(values) / len(values)
