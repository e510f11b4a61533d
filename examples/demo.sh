#!/usr/bin/env bash
# The demo: copy examples/demo into a fresh git repo and show what
# `git agent-apply` makes of sample replies. Nothing outside a temp dir is touched.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2
cargo build --quiet -p agent-apply
bin="$PWD/target/debug/git-agent-apply"

repo="$(mktemp -d)"
trap 'rm -rf "$repo"' EXIT
cp -r "$here/demo/." "$repo/"
git -C "$repo" init -q && git -C "$repo" add -A
git -C "$repo" -c user.name=demo -c user.email=demo@example.com commit -qm "demo project"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
step git agent-apply formats
"$bin" --repo "$repo" formats
step git agent-apply parse examples/replies/whole.md
"$bin" --repo "$repo" parse "$here/replies/whole.md"
step git agent-apply --dry-run examples/replies/whole.md
"$bin" --repo "$repo" --dry-run "$here/replies/whole.md"
step "git agent-apply --dry-run examples/replies/whole-elided.md   # refused: it would delete code"
"$bin" --repo "$repo" --dry-run --format whole "$here/replies/whole-elided.md" || echo "(exit $?: nothing was changed)"
step "git agent-apply examples/replies/editblock.md   # applied and committed"
"$bin" --repo "$repo" "$here/replies/editblock.md"
git -C "$repo" log --oneline
step "git agent-apply --json examples/replies/udiff.md   # the first edit changed the context: refused, with a reflection"
"$bin" --repo "$repo" --json "$here/replies/udiff.md" || echo "(exit $?: nothing was changed)"
step git agent-apply undo
"$bin" --repo "$repo" undo
step git agent-apply read --format hashline src/greet.py --lines 1-2
(cd "$repo" && "$bin" read --format hashline src/greet.py --lines 1-2)
