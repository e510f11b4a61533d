import os
import sys
import json


def load(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def save(path, data):
    with open(path, "w") as f:
        f.write(data)


def main():
    data = json.loads(load(sys.argv[1]))
    save(sys.argv[2], json.dumps(data))


if __name__ == "__main__":
    main()
