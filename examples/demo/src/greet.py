def greet():
    print("Hello!")


if __name__ == "__main__":
    greet()
