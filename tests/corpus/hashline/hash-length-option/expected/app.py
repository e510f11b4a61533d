def greet():
    print("Hey!")


def main():
    greet()
