keep
# TODO remove
old()
keep too
