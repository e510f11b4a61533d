def main():
    run()