def main():
    print(load(sys.argv[1]))
