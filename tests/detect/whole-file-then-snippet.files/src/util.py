import json


def read_config(path):
    with open(path) as f:
        return json.load(f)


def write_config(path, config):
    with open(path, 'w') as f:
        json.dump(config, f, indent=2)


def merged(base, extra):
    out = dict(base)
    out.update(extra)
    return out
