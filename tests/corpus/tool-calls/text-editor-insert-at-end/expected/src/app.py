def greet():
    print("Hello!")


def main():
    greet()


if __name__ == "__main__":
    main()
