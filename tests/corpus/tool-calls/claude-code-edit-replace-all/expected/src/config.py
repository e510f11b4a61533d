VERBOSE = False

if VERBOSE:
    print("VERBOSE on")
