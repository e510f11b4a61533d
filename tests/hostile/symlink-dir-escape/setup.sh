set -euo pipefail
ln -s "$OUTSIDE" out
git add out
git commit -qm out
