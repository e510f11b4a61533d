import sys
def greet():
    print("Hello!")


def main():
    greet()
    sys.exit(0)
