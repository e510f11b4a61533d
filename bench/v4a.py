"""V4A (`apply-patch`) replies for the bench rows: the same changes the
udiff rows make, as the patch a codex-family model writes. Each function's
`def` line is the hunk's `@@` scope line, as those models write it."""


def hunk(lines, i, repl):
    """One hunk replacing line i: scoped by the `def` line above it, two
    unchanged lines before the change and two after."""
    start = i
    while start > 0 and not lines[start].startswith("def "):
        start -= 1
    out = [f"@@ {lines[start]}"]
    out += [" " + l for l in lines[max(start + 1, i - 2):i]]
    out += ["-" + lines[i]] + ["+" + l for l in repl]
    out += [" " + l for l in lines[i + 1:i + 3]]
    return out


def reply_apply_patch(path, lines, changes, _hashes=None):
    """A reply holding one patch that updates `path`."""
    out = ["*** Begin Patch", f"*** Update File: {path}"]
    for i, repl in changes:
        out += hunk(lines, i, repl)
    out.append("*** End Patch")
    return "".join(l + "\n" for l in out) + "\n"
