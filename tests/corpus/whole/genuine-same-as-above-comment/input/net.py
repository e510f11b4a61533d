def fetch(url):
    return get(url)


def fetch_all(urls):
    return [fetch(u) for u in urls]
