def greet():
    print("Hello, world!")


def main():
    greet()
