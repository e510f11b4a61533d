def greet():
    print("Hello!")


def main():
    greet()  # entry
