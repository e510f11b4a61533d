from util import add
def greet():
    print("Hello!")


def main():
    greet()
    print(add(1, 2))
