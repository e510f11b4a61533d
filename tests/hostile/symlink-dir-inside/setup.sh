set -euo pipefail
ln -s src inside
git add inside
git commit -qm inside
