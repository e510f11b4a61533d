set -euo pipefail
git init -q -b main "$OUTSIDE/subrepo"
echo s > "$OUTSIDE/subrepo/s.txt"
git -C "$OUTSIDE/subrepo" add s.txt
git -C "$OUTSIDE/subrepo" commit -qm s
git submodule --quiet add "$OUTSIDE/subrepo" libs/sub
git commit -qm "add submodule"
