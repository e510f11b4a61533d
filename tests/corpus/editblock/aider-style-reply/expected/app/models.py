class User:
    def __init__(self, name, email=None):
        self.name = name
        self.email = email

    def greet(self):
        return "hi " + self.name
