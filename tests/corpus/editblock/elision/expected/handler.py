def handler(event):
    log(event, level="debug")
    check(event)
    validate(event)
    store(event)
    return store_ok(event)
