def handler_0(event):
    return 0


def handler_1(event):
    return 1


def handler_2(event):
    return 2


def handler_3(event):
    return 3


def handler_4(event):
    return 4


def handler_5(event):
    return 5


def handler_6(event):
    return 6


def handler_7(event):
    return 7


def handler_8(event):
    return 8


def handler_9(event):
    return 9


def handler_10(event):
    return 10


def handler_11(event):
    return 11


def handler_12(event):
    return 12


def handler_13(event):
    return 13


def handler_14(event):
    return 14


def handler_15(event):
    return 15


def handler_16(event):
    return 16


def handler_17(event):
    return 17


def handler_18(event):
    return 18


def handler_19(event):
    return 19


def handler_20(event):
    return 20


def handler_21(event):
    return 21


def handler_22(event):
    return 22


def handler_23(event):
    return 23


def handler_24(event):
    return 24


def handler_25(event):
    return 25


def handler_26(event):
    return 26


def handler_27(event):
    return 27


def handler_28(event):
    return 28


def handler_29(event):
    return 29


