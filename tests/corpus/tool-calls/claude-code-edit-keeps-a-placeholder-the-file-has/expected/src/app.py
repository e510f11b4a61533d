def greet(name):
    print(f"Hello, {name}!")
    # ... existing code ...


def main():
    greet()
