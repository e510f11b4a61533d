def handler(event):
    log(event)
    check(event)
    validate(event)
    store(event)
    return True
