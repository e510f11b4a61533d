set -euo pipefail
# The checked-out case's submodule, then taken out of the working tree.
source "$(dirname "$0")/../submodule-file/setup.sh"
git submodule --quiet deinit -f libs/sub
