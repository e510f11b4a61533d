from app.models import User


def show(name):
    return User(name).greet()
