set -euo pipefail
git config core.hooksPath "$PWD/ci/git-hooks"
