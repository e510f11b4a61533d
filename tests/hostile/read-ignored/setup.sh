set -euo pipefail
echo SECRET=1 > .env
