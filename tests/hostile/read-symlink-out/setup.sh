set -euo pipefail
ln -s "$OUTSIDE/victim.txt" leak.txt
