#!/usr/bin/env python3
"""Run `git apply` and GNU `patch -F2` on every tests/corpus/udiff case.

For each case the diff text is the bodies of the reply's ```diff/```patch
fences (or the whole reply when it has none). A peer is "correct" on a case
when it produces exactly expected/ (byte for byte), or, for an
expected-error case, when it refuses. Usage: compare_peers.py [CORPUS_DIR]
"""
import os, re, shutil, subprocess, sys, tempfile

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../../tests/corpus/udiff")

def diff_text(reply):
    bodies = re.findall(r"^```(?:diff|patch)[^\n]*\n(.*?)^```", reply, re.S | re.M)
    return "".join(bodies) if bodies else reply

def tree(d):
    out = {}
    for base, _, files in os.walk(d):
        for f in files:
            p = os.path.join(base, f)
            out[os.path.relpath(p, d)] = open(p, "rb").read()
    return out

def run(case, tool):
    tmp = tempfile.mkdtemp()
    try:
        if os.path.isdir(os.path.join(case, "input")):
            shutil.copytree(os.path.join(case, "input"), tmp, dirs_exist_ok=True)
        before = tree(tmp)
        reply = open(os.path.join(case, "reply.md"), newline="").read()
        text = diff_text(reply)
        open(os.path.join(tmp, ".change.diff"), "w", newline="").write(text)
        if tool == "git":
            cmd = ["git", "apply", "--check", ".change.diff"]
            ok = subprocess.run(cmd, cwd=tmp, capture_output=True).returncode == 0
            if ok:
                subprocess.run(["git", "apply", ".change.diff"], cwd=tmp, capture_output=True)
        else:
            strip = "-p1" if re.search(r"^(---|\+\+\+) [ab]/", text, re.M) else "-p0"
            r = subprocess.run(["patch", "-F2", strip, "-s", "-f", "--no-backup-if-mismatch", "-i", ".change.diff"],
                               cwd=tmp, capture_output=True)
            ok = r.returncode == 0
        os.remove(os.path.join(tmp, ".change.diff"))
        after = tree(tmp)
        if os.path.exists(os.path.join(case, "expected-error")):
            return ok, (not ok) or after == before
        want = dict(before)
        exp = tree(os.path.join(case, "expected"))
        want.update(exp)
        # files the expected tree leaves out were deleted or renamed away
        for p in list(want):
            if p not in exp and p in before and p not in after and ok:
                pass
        correct = ok and all(after.get(p) == c for p, c in exp.items()) and all(
            p in exp or after.get(p) == before.get(p) for p in after)
        return ok, correct
    finally:
        shutil.rmtree(tmp)

cases = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
totals = {"git": 0, "patch": 0}
print(f"{'case':45} {'must':6} {'git apply':18} {'patch -F2':18}")
for name in cases:
    case = os.path.join(root, name)
    must = "fail" if os.path.exists(os.path.join(case, "expected-error")) else "apply"
    row = []
    for tool in ("git", "patch"):
        ok, correct = run(case, tool)
        totals[tool] += correct
        row.append(("accepts" if ok else "rejects") + (" (right)" if correct else " (WRONG)"))
    print(f"{name:45} {must:6} {row[0]:18} {row[1]:18}")
print(f"correct: git apply {totals['git']}/{len(cases)}, patch -F2 {totals['patch']}/{len(cases)}")
