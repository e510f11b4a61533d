def main():
    run()
    report()