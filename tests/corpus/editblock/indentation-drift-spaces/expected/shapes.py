class Shape:
    def area(self):
        raise NotImplementedError

    def name(self):
        return "shape"
