"""Writes host/build/symbol-order/TARGET.txt: the functions of
git-agent-apply that a run executes, for the linker to place side by side
(see host/build/link.rs, `order_symbols`). Run by bench/symbol-order after a
dependency, toolchain or profile change (a test names the case), once for
each target that has a file: `--target x86_64-unknown-linux-musl` for the
musl build (the default is the glibc one).

The release binary is relinked with its symbols kept, and the quick bench
(rows 1, 2, 3 and 5: start-up, commits, working-tree applies, every
format), row 5 in full (10 MB replies) and the demo's commands are run
through it, each distinct command line once under callgrind. Every
function callgrind saw that the binary defines is listed, those more runs
executed first; a header records the fingerprint the test compares.
"""

import collections
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ORDERS = os.path.join(ROOT, "host", "build", "symbol-order")
GLIBC = "x86_64-unknown-linux-gnu"
# What the symbols' names are made of: a change to any of these may rename them.
FINGERPRINTED = ("Cargo.lock", "Cargo.toml", "host/Cargo.toml", "rust-toolchain.toml")

WRAPPER = """#!/bin/sh
# Each distinct command line once under callgrind, then natively; one cache
# of compiled components, made under valgrind (see warm_cache).
export AGENT_APPLY_CACHE_DIR="{out}/cache"
key=$(printf '%s\\0' "$@" | sha1sum | cut -c1-16)
if [ -e "{out}/seen.$key" ]; then exec "{binary}" "$@"; fi
: > "{out}/seen.$key"
exec valgrind -q --tool=callgrind --demangle=no --callgrind-out-file="{out}/cg.%p" "{binary}" "$@"
"""


def fingerprint():
    digest = hashlib.sha256()
    for name in FINGERPRINTED:
        with open(os.path.join(ROOT, name), "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def run(cmd, **kw):
    print("+ " + " ".join(cmd), file=sys.stderr)
    return subprocess.run(cmd, check=True, **kw)


def target_args(target):
    """cargo's arguments and the output directory for `target`: the glibc
    build is the default one, in target/release."""
    if target == GLIBC:
        return [], "release"
    return ["--target", target], os.path.join(target, "release")


def unstripped_binary(work, target):
    """The release binary relinked with its symbol table (nothing else is
    rebuilt: the extra flag is the binary crate's alone)."""
    args, out = target_args(target)
    cargo = ["cargo", "rustc", "--quiet", "--release", "-p", "agent-apply", "--bin", "git-agent-apply"] + args
    run(cargo + ["--", "-C", "strip=none"], cwd=ROOT)
    target_dir = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    binary = os.path.join(work, "git-agent-apply")
    shutil.copy2(os.path.join(target_dir, out, "git-agent-apply"), binary)
    return binary


def warm_cache(binary, out):
    """Compiles the built-in formats into the wrapper's cache under valgrind.
    Valgrind's CPU lacks features this one has, so the embedded machine
    code does not fit it: without this, the first run of each format would
    compile under callgrind, for minutes, and list the compiler's functions
    as a run's. (One `parse` loads every format whose detect hints the
    reply holds: this one holds each built-in's.)"""
    reply = os.path.join(out, "warm.md")
    with open(reply, "w") as f:
        f.write("hello\n```\n:1 <<<<< @@ *** Begin Patch set_line old_string\n```\n")
    env = dict(os.environ, AGENT_APPLY_CACHE_DIR=os.path.join(out, "cache"))
    subprocess.run(["valgrind", "-q", "--tool=none", binary, "parse", "--format", "udiff", reply], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def demo_runs(wrapper, work):
    """The demo's commands (examples/demo.sh), on a copy of its project."""
    repo = os.path.join(work, "demo")
    shutil.copytree(os.path.join(ROOT, "examples", "demo"), repo)
    git = ["git", "-C", repo, "-c", "user.name=demo", "-c", "user.email=demo@example.com"]
    run(git + ["init", "-q"])
    run(git + ["add", "-A"])
    run(git + ["commit", "-qm", "demo project"])
    replies = os.path.join(ROOT, "examples", "replies")
    for args in (["formats"], ["parse", f"{replies}/whole.md"], ["--dry-run", f"{replies}/whole.md"],
                 ["--dry-run", "--format", "whole", f"{replies}/whole-elided.md"], [f"{replies}/editblock.md"],
                 ["--json", f"{replies}/udiff.md"], ["undo"],
                 ["read", "--format", "hashline", "src/greet.py", "--lines", "1-2"]):
        subprocess.run([wrapper] + args, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def executed(out, defined):
    """The binary's functions named in the callgrind profiles under `out`,
    those more runs execute first (then by name): the code every run needs
    shares pages, and what one command alone needs sits after it."""
    runs = collections.Counter()
    pattern = re.compile(r"^c?fn=\(\d+\) (.+)$")
    for profile in glob.glob(os.path.join(out, "cg.*")):
        with open(profile, errors="replace") as f:
            names = {m.group(1) for m in map(pattern.match, f) if m and m.group(1) in defined}
        runs.update(names)
    return sorted(runs, key=lambda name: (-runs[name], name))


def main():
    if not shutil.which("valgrind"):
        sys.exit("bench/symbol-order needs valgrind (apt-get install valgrind)")
    target = sys.argv[2] if sys.argv[1:2] == ["--target"] else GLIBC
    order = os.path.join(ORDERS, target + ".txt")
    work = tempfile.mkdtemp(prefix="agent-apply-symbol-order-")
    try:
        binary = unstripped_binary(work, target)
        symbols = subprocess.run(["nm", "--defined-only", binary], check=True, capture_output=True, text=True)
        defined = {parts[2] for parts in (l.split() for l in symbols.stdout.splitlines())
                   if len(parts) == 3 and parts[1] in "tTwW"}
        out = os.path.join(work, "profiles")
        os.makedirs(out)
        wrapper = os.path.join(work, "wrapper")
        with open(wrapper, "w") as f:
            f.write(WRAPPER.format(out=out, binary=binary))
        os.chmod(wrapper, 0o755)
        warm_cache(binary, out)
        demo_runs(wrapper, work)
        # The bench's targets mean nothing under callgrind; its runs are what
        # count. Row 5 in full too: files over 4 MiB take their own path.
        bench = [sys.executable, os.path.join(HERE, "bench.py"), "--bin", wrapper, "--no-save"]
        subprocess.run(bench + ["--quick", "--rows", "1,2,3,5"], stdout=subprocess.DEVNULL, check=True)
        subprocess.run(bench + ["--rows", "5"], stdout=subprocess.DEVNULL, check=True)
        names = executed(out, defined)
        profiles = len(glob.glob(os.path.join(out, "cg.*")))
        with open(order + ".tmp", "w") as f:
            f.write(f"# Made by bench/symbol-order from {profiles} profiled runs; do not edit.\n")
            f.write(f"# sha256 of {' '.join(FINGERPRINTED)}: {fingerprint()}\n")
            f.writelines(name + "\n" for name in names)
        os.replace(order + ".tmp", order)
        print(f"{len(names)} of {len(defined)} functions, from {profiles} runs: {order}", file=sys.stderr)
        # The stripped release binary, linked in the new order: one linked
        # before it was written kept the old one (names a change renamed are
        # not placed), and measured 0.5 ms slower on a one-edit run.
        run(["cargo", "build", "--quiet", "--release", "-p", "agent-apply"] + target_args(target)[0], cwd=ROOT)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
