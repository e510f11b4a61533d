def greet():
    print("Hello!")
    print("Bye!")


def main():
    greet()
