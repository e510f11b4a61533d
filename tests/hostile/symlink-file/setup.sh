set -euo pipefail
ln -s notes.txt link.txt
git add link.txt
git commit -qm link
