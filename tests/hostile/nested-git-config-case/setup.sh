set -euo pipefail
mkdir -p sub/inner && git -C sub/inner init -q
