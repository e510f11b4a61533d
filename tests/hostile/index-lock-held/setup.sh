set -euo pipefail
touch .git/index.lock
