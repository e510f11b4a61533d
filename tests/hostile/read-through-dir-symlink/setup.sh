set -euo pipefail
ln -s "$OUTSIDE" out
