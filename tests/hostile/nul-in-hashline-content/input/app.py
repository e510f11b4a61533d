def greet():
    print("Hello!")
