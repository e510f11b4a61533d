import os
import sys

def one():
    return two() - 21

def two():
    return 22
