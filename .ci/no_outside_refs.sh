#!/usr/bin/env bash
# Fails when a file of the repository points outside it: at the design notes or the API
# specification the project was built from (a clone has neither), or at their numbered
# sections. The API is described in docs/; point there instead.
set -euo pipefail
cd "$(dirname "$0")/.."

pattern='shared/|/work/|decisions\.md|decisions ?(§|[0-9])|spec(ification)? section|section [0-9]|§ ?[0-9]'
# (--include first: grep then skips every file no option names; the last matching option wins.)
# The tools CI installs inside the clone (.ci/.venv, .ci/.clients) are third-party files.
if grep -rInE "$pattern" . \
    --include='*.rs' --include='*.md' --include='*.toml' --include='*.sh' \
    --include='*.sql' --include='*.yml' --include='*.yaml' --include='*.json' \
    --exclude=no_outside_refs.sh --exclude-dir=target --exclude-dir=.git \
    --exclude-dir=.venv --exclude-dir=.clients --exclude-dir=node_modules; then
    echo "error: the lines above point outside the repository; point at docs/ instead" >&2
    exit 1
fi
echo "no pointers outside the repository"
