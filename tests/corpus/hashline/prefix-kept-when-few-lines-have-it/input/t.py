table = {}
