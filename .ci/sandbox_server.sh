# Sourced by .ci/schemathesis.sh and .ci/clients.sh: builds and starts the sandbox server on
# 127.0.0.1:$PORT, stops it on exit, and waits for its OpenAPI document, left in
# "$work/openapi.json" ($work: a temporary directory removed on exit; $url: the document's URL).
cargo build --quiet --workspace --all-features --example server
work="$(mktemp -d)"
"${CARGO_TARGET_DIR:-target}/debug/examples/server" --addr "127.0.0.1:$PORT" >"$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT

url="http://127.0.0.1:$PORT/api/v1/openapi.json"
for _ in $(seq 1 120); do
  if curl -fsS -o "$work/openapi.json" "$url" 2>/dev/null; then
    break
  fi
  if ! kill -0 "$server" 2>/dev/null; then
    cat "$work/server.log"
    echo "the sandbox server stopped" >&2
    exit 1
  fi
  sleep 0.5
done
[ -s "$work/openapi.json" ] || { echo "no document at $url" >&2; exit 1; }
