from app.models import User


def show(name, email=None):
    return User(name, email).greet()
