keep
keep too
