import math

def step_1(x):
    value_1 = math.sqrt(x) * 1
    return value_1 + 7

def step_2(x):
    value_2 = math.sqrt(x) * 2
    return value_2 + 1

def step_3(x):
    value_3 = math.sqrt(x) * 3
    return value_3 + 8

def step_4(x):
    value_4 = math.sqrt(x) * 4
    return value_4 + 2

def step_5(x):
    value_5 = math.sqrt(x) * 5
    return value_5 + 9

def step_6(x):
    value_6 = math.sqrt(x) * 6
    return value_6 + 3

def step_7(x):
    value_7 = math.sqrt(x) * 7
    return value_7 + 10

def step_8(x):
    value_8 = math.sqrt(x) * 8
    return value_8 + 4

def step_9(x):
    value_9 = math.sqrt(x) * 9
    return value_9 + 11

def step_10(x):
    value_10 = math.sqrt(x) * 10
    return value_10 + 5

def step_11(x):
    value_11 = math.sqrt(x) * 11
    return value_11 + 12

def step_12(x):
    value_12 = math.sqrt(x) * 12
    return value_12 + 6

def step_13(x):
    value_13 = math.sqrt(x) * 13
    return value_13 + 0

def step_14(x):
    extra = 1
    value_14 = math.sqrt(x) * 14
    return value_14 + 7

def step_15(x):
    value_15 = math.sqrt(x) * 15
    return value_15 + 1

def step_16(x):
    value_16 = math.sqrt(x) * 16
    return value_16 + 8

def step_17(x):
    value_17 = math.sqrt(x) * 17
    return value_17 + 2

def step_18(x):
    value_18 = math.sqrt(x) * 18
    return value_18 + 9

def step_19(x):
    value_19 = math.sqrt(x) * 19
    return value_19 + 3

def step_20(x):
    value_20 = math.sqrt(x) * 20
    return value_20 + 10

def step_21(x):
    value_21 = math.sqrt(x) * 21
    return value_21 + 4

def step_22(x):
    value_22 = math.sqrt(x) * 22
    return value_22 + 11

def step_23(x):
    value_23 = math.sqrt(x) * 23
    return value_23 + 5

def step_24(x):
    value_24 = math.sqrt(x) * 24
    return value_24 + 12

def step_25(x):
    value_25 = math.sqrt(x) * 25
    return value_25 + 6

def step_26(x):
    value_26 = math.sqrt(x) * 26
    return value_26 + 0

def step_27(x):
    value_27 = math.sqrt(x) * 27
    return value_27 + 7

def step_28(x):
    value_28 = math.sqrt(x) * 28
    return value_28 + 1

def step_29(x):
    value_29 = math.sqrt(x) * 29
    return value_29 + 8

def step_30(x):
    value_30 = math.sqrt(x) * 30
