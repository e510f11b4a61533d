import os
import sys


def load(path):
    with open(path) as f:
        return f.read()


def save(path, data):
    with open(path, "w") as f:
        f.write(data)


def main():
    data = load(sys.argv[1])
    save(sys.argv[2], data.upper())


if __name__ == "__main__":
    main()
