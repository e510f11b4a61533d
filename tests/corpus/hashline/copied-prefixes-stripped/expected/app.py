def greet():
    print("Hi!")
    print("there")


def main():
    greet()
