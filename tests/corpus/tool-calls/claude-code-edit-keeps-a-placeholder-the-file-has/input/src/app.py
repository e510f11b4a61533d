def greet():
    print("Hello!")
    # ... existing code ...


def main():
    greet()
