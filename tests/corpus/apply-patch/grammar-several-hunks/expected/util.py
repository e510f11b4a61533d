def clamp(x, lo, hi):
    if x < lo:
        return lo  # below
    if x > hi:
        return hi
    return x


def mean(values):
    return math.fsum(values) / len(values)
