#!/usr/bin/env bash
# Build the Python plugin into a wasm component against the repository's WIT.
#   bash examples/python-plugin/build.sh [OUT.wasm]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/ops_json_py.wasm}"
command -v componentize-py >/dev/null || python3 -m pip install --quiet componentize-py
cd "$here"
componentize-py -d ../../plugins-sdk/wit/since_v0.1.0 -w format componentize app -o "$out"
