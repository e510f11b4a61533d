def greet():
    print("Hello!")

