import os
import sys


def load(path):
    with open(path) as f:
        return f.read()


def total(items):
    result = 0
    for item in items:
        result += item.price
    return result


def main():
    data = load(sys.argv[1])
    print(total(data))


if __name__ == "__main__":
    main()
