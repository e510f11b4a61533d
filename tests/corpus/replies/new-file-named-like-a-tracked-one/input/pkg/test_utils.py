import os


def make_fixture():
    return {'a': 1}


def cleanup(path):
    os.remove(path)
