set -euo pipefail
git config core.hooksPath tools/hooks
mkdir -p tools/hooks
