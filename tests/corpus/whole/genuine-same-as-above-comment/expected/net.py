def fetch(url):
    return get(url, timeout=10)


# Same as above, but for a list of URLs.
def fetch_all(urls):
    return [fetch(u) for u in urls]
