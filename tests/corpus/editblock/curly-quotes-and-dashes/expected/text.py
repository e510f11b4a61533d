MESSAGE = “Don’t panic — it’s fine”
LIMIT = 20
