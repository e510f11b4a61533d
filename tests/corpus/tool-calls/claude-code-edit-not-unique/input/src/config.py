def load():
    return None


def save():
    return None
