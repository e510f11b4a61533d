def greet(loud=False):
    print("HELLO!" if loud else "Hello!")


def main():
    greet()
