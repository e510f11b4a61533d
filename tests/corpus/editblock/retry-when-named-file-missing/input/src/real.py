LEVEL = "info"
