def greet(name="world"):
    print("Hello!")


def main():
    greet("Ada")
