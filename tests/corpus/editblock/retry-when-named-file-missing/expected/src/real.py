LEVEL = "debug"
