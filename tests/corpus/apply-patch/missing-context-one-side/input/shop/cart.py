import math


class Cart:
    def __init__(self, items):
        self.items = items

    def total(self):
        result = 0
        for item in self.items:
            result += item.price
        return result

    def count(self):
        return len(self.items)


class Wishlist:
    def __init__(self, items):
        self.items = items

    def total(self):
        result = 0
        for item in self.items:
            result += item.price
        return result
