#!/usr/bin/env bash
# The whole process on a small whole-file reply, beside `git apply` making the
# same one-file change, in the same run. Prints medians and the ratio.
#   bash bench/plugin-path.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-40}"
rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2
cargo build --quiet --release -p agent-apply
exec python3 bench/plugin_path.py "$PWD/target/release/git-agent-apply" "$runs"
