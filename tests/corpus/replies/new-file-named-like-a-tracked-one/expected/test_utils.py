def assert_close(a, b):
    assert abs(a - b) < 1e-9
