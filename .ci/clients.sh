#!/usr/bin/env bash
# Clients generated from the OpenAPI document, as integrators would make them:
# - TypeScript: openapi-typescript (npm) turns the document into types;
#   .ci/clients/client.ts, a small typed client that calls every operation, must type-check
#   against them (tsc, strict), and .ci/clients/quickstart.ts, compiled with it to JavaScript,
#   runs the quick-start flow with that client against the running sandbox (node);
# - Python: openapi-python-client (PyPI) generates a client package, and
#   .ci/clients/quickstart.py runs the quick-start flow with it against the running sandbox
#   (me, products, quote, order, cancel, webhooks).
# Every tool is pinned and installed inside the clone (.ci/.clients: node_modules and a
# virtualenv, not committed); nothing is cached outside it.
set -euo pipefail
cd "$(dirname "$0")/.."

OPENAPI_TYPESCRIPT_VERSION=7.13.0
TYPESCRIPT_VERSION=5.9.3
OPENAPI_PYTHON_CLIENT_VERSION=0.29.1
PORT="${CLIENTS_PORT:-18081}"
TOOLS=.ci/.clients
started=$SECONDS

# The tools, installed once per clone (again when a pinned version changes).
mkdir -p "$TOOLS/node"
cat >"$TOOLS/node/package.json" <<JSON
{
  "private": true,
  "devDependencies": {
    "openapi-typescript": "$OPENAPI_TYPESCRIPT_VERSION",
    "typescript": "$TYPESCRIPT_VERSION"
  }
}
JSON
if ! "$TOOLS/node/node_modules/.bin/tsc" --version 2>/dev/null | grep -q "$TYPESCRIPT_VERSION" ||
  ! grep -q "\"version\": \"$OPENAPI_TYPESCRIPT_VERSION\"" \
    "$TOOLS/node/node_modules/openapi-typescript/package.json" 2>/dev/null; then
  npm install --prefix "$TOOLS/node" --no-audit --no-fund --no-save --loglevel=error \
    --cache "$TOOLS/npm-cache" >/dev/null
fi
if ! "$TOOLS/venv/bin/pip" show openapi-python-client 2>/dev/null |
  grep -q "^Version: $OPENAPI_PYTHON_CLIENT_VERSION$"; then
  python3 -m venv "$TOOLS/venv"
  "$TOOLS/venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir \
    "openapi-python-client==$OPENAPI_PYTHON_CLIENT_VERSION"
fi

# The sandbox, for the document and for the Python client's run.
# shellcheck source=/dev/null
source .ci/sandbox_server.sh

# TypeScript: types from the document, the typed client checked against them and compiled
# with the quick start to JavaScript (CommonJS, which node runs without a package.json), then
# the quick-start flow against the sandbox with node's own fetch.
mkdir -p "$work/ts"
"$TOOLS/node/node_modules/.bin/openapi-typescript" "$work/openapi.json" \
  --output "$work/ts/schema.d.ts" --silent
cp .ci/clients/client.ts .ci/clients/quickstart.ts "$work/ts/"
"$TOOLS/node/node_modules/.bin/tsc" --strict --target es2022 --module commonjs \
  --lib es2022,dom --outDir "$work/ts/js" "$work/ts/client.ts" "$work/ts/quickstart.ts"
echo "TypeScript: the typed client of every operation type-checks (openapi-typescript $OPENAPI_TYPESCRIPT_VERSION, tsc $TYPESCRIPT_VERSION)"
node "$work/ts/js/quickstart.js" "http://127.0.0.1:$PORT"

# Python: a generated client package, then the quick-start flow with it.
"$TOOLS/venv/bin/openapi-python-client" generate --path "$work/openapi.json" \
  --config .ci/clients/openapi-python-client.yaml --output-path "$work/py/commerce_api_client" \
  --meta none --overwrite >"$work/generate.log" 2>&1 ||
  { cat "$work/generate.log"; exit 1; }
if grep -qi "warning" "$work/generate.log"; then
  cat "$work/generate.log"
  echo "openapi-python-client warned about the document" >&2
  exit 1
fi
PYTHONPATH="$work/py" "$TOOLS/venv/bin/python" .ci/clients/quickstart.py "http://127.0.0.1:$PORT"

echo "clients.sh: done in $((SECONDS - started)) s"
