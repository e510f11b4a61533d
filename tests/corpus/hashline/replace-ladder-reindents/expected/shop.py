class Shop:
    def total(self):
        s = 0
        for item in self.items:
            s += item.price * item.count
        return s
