DEBUG = False

if DEBUG:
    print("DEBUG on")
