class Shape:
    def area(self):
        return 0

    def name(self):
        return "shape"
