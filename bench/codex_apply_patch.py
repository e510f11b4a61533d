#!/usr/bin/env python3
"""The codex applier beside ours on tests/corpus/apply-patch (issue 21).

    python3 bench/codex_apply_patch.py --bin target/debug/git-agent-apply [--verbose]

Installs `@openai/codex` with npm into bench/.cache/codex (once; the npm
package ships the native binary, whose `--codex-run-as-apply-patch PATCH`
entry point is the applier the codex tool runs) and runs every corpus case
through both:

- ours: `git agent-apply --format apply-patch --no-commit REPLY` in a fresh
  git repo holding the case's input;
- codex: the patch a harness would hand it (the heredoc body and its `cd`,
  the JSON string, or `*** Begin Patch` … `*** End Patch` of the text) in a
  plain directory holding the same input.

Each run is one of: correct (the expected files, or a refusal where the case
must fail, with nothing changed), wrong (reported success, files not as
expected), refused (reported failure, nothing changed, where the case must
apply), damaged (reported failure, but files changed). Prints one row per
case kind (the case name's first word) and writes
bench/results/codex-apply-patch.json.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(ROOT, "tests", "corpus", "apply-patch")
CODEX_DIR = os.path.join(HERE, ".cache", "codex")
CODEX_VERSION = os.environ.get("CODEX_VERSION", "0.169.0")
OUTCOMES = ("correct", "wrong", "refused", "damaged")
GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="b@example.com",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="b@example.com",
               GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", AGENT_APPLY_CONFIG="/nonexistent")


def codex_binary():
    """The codex native binary, installed with npm on first use."""
    pattern = os.path.join(CODEX_DIR, "node_modules", "@openai", "codex-*", "vendor", "*", "bin", "codex")
    found = glob.glob(pattern)
    if not found:
        os.makedirs(CODEX_DIR, exist_ok=True)
        print(f"installing @openai/codex@{CODEX_VERSION} into {CODEX_DIR}", file=sys.stderr)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", CODEX_DIR,
                        f"@openai/codex@{CODEX_VERSION}"], check=True, stdout=subprocess.DEVNULL)
        found = glob.glob(pattern)
    if not found:
        sys.exit(f"no codex binary under {CODEX_DIR} after npm install")
    return found[0]


def tree(d):
    out = {}
    for base, dirs, files in os.walk(d):
        dirs[:] = [x for x in dirs if x != ".git"]
        for f in files:
            p = os.path.join(base, f)
            out[os.path.relpath(p, d)] = open(p, "rb").read()
    return out


HEREDOC = re.compile(r"^(?P<line>.*apply_?patch\s*<<-?\s*['\"]?(?P<delim>\w+)['\"]?.*)$", re.M)


def from_text(text):
    """(patch, cwd) as a harness hands them to codex: a heredoc's body and
    its `cd`, else `*** Begin Patch` through `*** End Patch` (or to the end
    of the text, which codex then refuses)."""
    m = HEREDOC.search(text)
    if m:
        rest = text[m.end() + 1:]
        end = re.search(rf"^\s*{m.group('delim')}\s*$", rest, re.M)
        cd = re.search(r"(?:^|[\s'\"(;])cd\s+([^&;]+?)\s*(?:&&|;)", m.group("line"))
        return (rest[:end.start()] if end else rest), (cd.group(1).strip("'\" ") if cd else None)
    begin = text.find("*** Begin Patch")
    if begin < 0:
        return text, None
    end = text.find("*** End Patch", begin)
    return (text[begin:end + len("*** End Patch")] if end >= 0 else text[begin:]), None


def patch_for_codex(reply):
    try:
        value = json.loads(reply)
    except ValueError:
        return from_text(reply)
    strings = []

    def walk(v):
        if isinstance(v, str):
            try:
                walk(json.loads(v)) if v.lstrip().startswith("{") else strings.append(v)
            except ValueError:
                strings.append(v)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
    walk(value)
    holding = [s for s in strings if "*** Begin Patch" in s]
    return from_text(holding[0]) if holding else (reply, None)


def classify(ok, after, before, case):
    """The outcome of one run; expected/ is read as the corpus runner reads
    it: listed files as given, every other file as it was."""
    must_fail = os.path.exists(os.path.join(case, "expected-error"))
    # An edit already in the file is done: succeeding without a change is as
    # right as refusing (we exit 0 with status `unchanged`, so a retried
    # reply is not a failure).
    with open(os.path.join(case, "expected-error")) if must_fail else open(os.devnull) as f:
        already = "already applied" in f.read()
    if already and after == before:
        return "correct"
    if must_fail:
        right = after == before
    else:
        expected = tree(os.path.join(case, "expected"))
        right = all(after.get(p) == c for p, c in expected.items()) and all(
            p in expected or after[p] == before.get(p) for p in after)
    if right and ok != must_fail:
        return "correct"
    if ok:
        return "wrong"
    return "refused" if after == before else "damaged"


def run_ours(binary, case, reply_path, tmp):
    repo = os.path.join(tmp, "repo")
    shutil.copytree(os.path.join(case, "input"), repo)
    subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True, env=GIT_ENV)
    subprocess.run(["git", "-C", repo, "add", "-A"], check=True, env=GIT_ENV)
    subprocess.run(["git", "-C", repo, "commit", "-q", "-m", "input"], check=True, env=GIT_ENV)
    before = tree(repo)
    r = subprocess.run([binary, "--format", "apply-patch", "--no-commit", reply_path], cwd=repo,
                       env=dict(GIT_ENV, AGENT_APPLY_CACHE_DIR=os.path.join(ROOT, "target", "bench-codex-cache")),
                       capture_output=True, text=True)
    return r.returncode == 0, before, tree(repo), r.stderr + r.stdout


def run_codex(codex, case, reply, tmp):
    repo = os.path.join(tmp, "repo")
    shutil.copytree(os.path.join(case, "input"), repo)
    before = tree(repo)
    patch, cwd = patch_for_codex(reply)
    workdir = os.path.normpath(os.path.join(repo, cwd)) if cwd else repo
    os.makedirs(workdir, exist_ok=True)
    r = subprocess.run([codex, "--codex-run-as-apply-patch", patch], cwd=workdir, capture_output=True, text=True)
    return r.returncode == 0, before, tree(repo), r.stderr + r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "git-agent-apply"))
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    codex = codex_binary()
    version = subprocess.run([codex, "--version"], capture_output=True, text=True).stdout.strip()
    counts, cases = {}, []
    for name in sorted(os.listdir(CORPUS)):
        case = os.path.join(CORPUS, name)
        reply_path = glob.glob(os.path.join(case, "reply.*"))[0]
        reply = open(reply_path, newline="").read()
        kind = name.split("-")[0]
        row = {"case": name, "kind": kind}
        for tool, runner in (("codex", lambda t: run_codex(codex, case, reply, t)),
                             ("ours", lambda t: run_ours(args.bin, case, reply_path, t))):
            tmp = tempfile.mkdtemp(prefix="codex-bench-")
            try:
                ok, before, after, output = runner(tmp)
            finally:
                shutil.rmtree(tmp)
            outcome = classify(ok, after, before, case)
            row[tool] = outcome
            counts.setdefault((kind, tool), dict.fromkeys(OUTCOMES, 0))[outcome] += 1
            if args.verbose and outcome != "correct":
                print(f"  {name} [{tool}] {outcome}: {output.strip().splitlines()[-1:] if output.strip() else ''}")
        cases.append(row)
    kinds = sorted({k for k, _ in counts})
    print(f"codex: {version}; corpus: {len(cases)} cases in tests/corpus/apply-patch\n")
    print("| kind | cases | codex correct / wrong / refused / damaged | ours correct / wrong / refused / damaged |")
    print("|---|---|---|---|")
    totals = {t: dict.fromkeys(OUTCOMES, 0) for t in ("codex", "ours")}
    for kind in kinds + ["all"]:
        cells = []
        for tool in ("codex", "ours"):
            c = totals[tool] if kind == "all" else counts[(kind, tool)]
            if kind != "all":
                for o in OUTCOMES:
                    totals[tool][o] += c[o]
            cells.append(" / ".join(str(c[o]) for o in OUTCOMES))
        n = len(cases) if kind == "all" else sum(counts[(kind, "ours")].values())
        print(f"| {kind} | {n} | {cells[0]} | {cells[1]} |")
    lost = [r["case"] for r in cases if r["codex"] == "correct" and r["ours"] != "correct"]
    won = [r["case"] for r in cases if r["ours"] == "correct" and r["codex"] != "correct"]
    print(f"\ncodex right, ours not: {lost or 'none'}")
    print(f"ours right, codex not ({len(won)}): {', '.join(won)}")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "codex-apply-patch.json"), "w") as f:
        json.dump({"codex": version, "cases": cases}, f, indent=1)
    bad = totals["ours"]["wrong"] + totals["ours"]["damaged"] + len(lost)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
