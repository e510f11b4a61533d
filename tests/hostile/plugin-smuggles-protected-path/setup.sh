set -euo pipefail
printf '[plugins.hostile]\npath = "%s"\n' "$HOSTILE_WASM" > .agent-apply.toml
git add .agent-apply.toml
git commit -qm plugin
