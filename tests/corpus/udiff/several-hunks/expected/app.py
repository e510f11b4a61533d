import os
import sys
import json


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
    print(json.dumps(total(data)))


if __name__ == "__main__":
    main()
