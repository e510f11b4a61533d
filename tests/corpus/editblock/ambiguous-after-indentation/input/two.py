if x:
    go()
else:
        go()
