"""Process-level comparison: `git agent-apply --dry-run` on a small
whole-file reply vs `git apply` of the equivalent diff, alternated run by run
so machine noise hits both alike. Also times a cold (empty cache) start."""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

binary, runs = sys.argv[1], int(sys.argv[2])
work = tempfile.mkdtemp(prefix="agent-apply-bench-")
repo = os.path.join(work, "repo")
cache = os.path.join(work, "cache")
os.makedirs(os.path.join(repo, "src"))
old = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(40))
new = old.replace("return 7\n", "return 70\n")
with open(os.path.join(repo, "src", "app.py"), "w") as f:
    f.write(old)
git = ["git", "-C", repo, "-c", "user.name=b", "-c", "user.email=b@x"]
subprocess.run(git + ["init", "-q"], check=True)
subprocess.run(git + ["add", "-A"], check=True)
subprocess.run(git + ["commit", "-qm", "base"], check=True)
reply = os.path.join(work, "reply.md")
with open(reply, "w") as f:
    f.write("src/app.py\n```python\n" + new + "```\n")
with open(os.path.join(repo, "src", "app.py"), "w") as f:
    f.write(new)
patch = subprocess.run(git + ["diff"], check=True, capture_output=True).stdout
subprocess.run(git + ["checkout", "-q", "--", "."], check=True)
patch_file = os.path.join(work, "change.patch")
with open(patch_file, "wb") as f:
    f.write(patch)

env = dict(os.environ, AGENT_APPLY_CACHE_DIR=cache, AGENT_APPLY_CONFIG="/nonexistent")
ours = [binary, "--repo", repo, "--dry-run", "--format", "whole", reply]
theirs = ["git", "-C", repo, "apply", patch_file]
undo = ["git", "-C", repo, "checkout", "-q", "--", "."]


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


cold = []
for _ in range(5):
    shutil.rmtree(cache, ignore_errors=True)
    cold.append(timed(ours))
for _ in range(3):  # warm-up
    timed(ours)
    timed(theirs)
    subprocess.run(undo, check=True)
a, b = [], []
for _ in range(runs):
    a.append(timed(ours))
    b.append(timed(theirs))
    subprocess.run(undo, check=True)
ma, mb, mc = statistics.median(a), statistics.median(b), statistics.median(cold)
print(f"| case | median | ratio to git apply |")
print(f"|---|---|---|")
print(f"| git apply (one-file change) | {mb*1000:.2f} ms | 1.00 |")
print(f"| git agent-apply --dry-run, warm cache | {ma*1000:.2f} ms | {ma/mb:.2f} (target <= 3) |")
print(f"| git agent-apply --dry-run, empty cache | {mc*1000:.2f} ms | {mc/mb:.2f} |")
shutil.rmtree(work)
