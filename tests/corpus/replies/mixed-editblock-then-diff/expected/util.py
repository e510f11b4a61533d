def helper():
    return 2
