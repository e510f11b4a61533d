CONFIG = {
    # ... rest of the settings come from the environment ...
    'debug': True,
}
