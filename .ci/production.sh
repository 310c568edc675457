#!/usr/bin/env bash
# examples/production.rs against PostgreSQL (COMMERCE_TEST_POSTGRES_URL, a fresh schema): set
# up; a start with a short admin token and one on a non-loopback address without --public are
# refused; serve, a few API requests, the back office's routes (the operator move, /metrics)
# without and with the token, then SIGTERM while a slow request is in flight (the slow route
# exists because COMMERCE_SLOW_ROUTE=1). Checks that the request completed, the process exited
# 0 within the drain bound, and no session of it was left `idle in transaction`. Bounded: about
# 20 s after the build.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${COMMERCE_TEST_POSTGRES_URL:?is not set}"
export COMMERCE_DATABASE_URL="$COMMERCE_TEST_POSTGRES_URL"
export COMMERCE_SCHEMA="commerce_ci_production_$$"
export COMMERCE_ADDR="127.0.0.1:${COMMERCE_PRODUCTION_PORT:-18090}"
export COMMERCE_ADMIN_TOKEN="ci-admin-token-0123456789abcdef0123456789"
# The slow route the drain is tested with: only where CI asks for it.
export COMMERCE_SLOW_ROUTE=1
# A dispatcher setting read from the environment (a misspelt one stops the start, below).
export COMMERCE_DISPATCHER__TIMEOUT=10s
export RUST_LOG="info,sqlx=warn"
BASE="http://$COMMERCE_ADDR"
API="$BASE/shop/api/v1"
LOG="$(mktemp -t commerce-production.XXXXXX)"
PID=""

psql_q() { psql "$COMMERCE_TEST_POSTGRES_URL" -Atq -c "$1"; }
cleanup() {
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -KILL "$PID" 2>/dev/null || true; fi
  psql_q "DROP SCHEMA IF EXISTS $COMMERCE_SCHEMA CASCADE" >/dev/null 2>&1 || true
  rm -f "$LOG"
}
trap cleanup EXIT
fail() {
  echo "production.sh: FAILED: $*" >&2
  echo "--- the example's log:" >&2
  cat "$LOG" >&2 || true
  exit 1
}

cargo build --quiet --workspace --all-features --example production
BIN="${CARGO_TARGET_DIR:-target}/debug/examples/production"

# Set-up (once: prints the key), then again: the second run creates nothing.
SETUP="$("$BIN" setup 2>>"$LOG")" || fail "setup"
KEY="$(sed -n 's/^key=//p' <<<"$SETUP")"
VARIANT="$(sed -n 's/.*variant_id=\([0-9]*\).*/\1/p' <<<"$SETUP")"
OPTION="$(sed -n 's/.*shipping_option_id=\([0-9]*\).*/\1/p' <<<"$SETUP")"
[ -n "$KEY" ] && [ -n "$VARIANT" ] && [ -n "$OPTION" ] || fail "setup printed no key/ids: $SETUP"
"$BIN" setup 2>>"$LOG" | grep -q "already set up" || fail "a second setup did not stop at the existing category"
[ "$(psql_q "SELECT COUNT(*) FROM $COMMERCE_SCHEMA.governorates")" = 27 ] || fail "governorates repeated"

# Refused starts: an admin token under 32 characters, an address other machines reach.
if COMMERCE_ADMIN_TOKEN=secret "$BIN" serve >>"$LOG" 2>&1; then fail "started with a 6-character admin token"; fi
grep -q "at least 32 are needed" "$LOG" || fail "no word on the short admin token"
if COMMERCE_ADDR="0.0.0.0:${COMMERCE_PRODUCTION_PORT:-18090}" "$BIN" serve >>"$LOG" 2>&1; then
  fail "listened on 0.0.0.0 without --public"
fi
grep -q "refusing to listen on 0.0.0.0" "$LOG" || fail "no word on the non-loopback address"
# A misspelt dispatcher setting stops the start, naming it (its own log; bounded, should it
# start after all).
MISSPELT_LOG="$(mktemp -t commerce-production-misspelt.XXXXXX)"
if COMMERCE_DISPATCHER__TIMEOUTS=10s timeout 60 "$BIN" serve >"$MISSPELT_LOG" 2>&1; then
  fail "started with a misspelt dispatcher setting"
fi
grep -q 'unknown field: found `timeouts`' "$MISSPELT_LOG" || fail "no word on the misspelt dispatcher setting: $(cat "$MISSPELT_LOG")"
rm -f "$MISSPELT_LOG"

"$BIN" serve >>"$LOG" 2>&1 &
PID=$!
for _ in $(seq 1 100); do
  curl -fs "$BASE/healthz" >/dev/null 2>&1 && break
  kill -0 "$PID" 2>/dev/null || fail "the example exited on start"
  sleep 0.1
done
curl -fs "$BASE/healthz" >/dev/null || fail "not listening on $BASE"

status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
AUTH="Authorization: Bearer $KEY"
[ "$(status "$API/me" -H "$AUTH")" = 200 ] || fail "GET /me"
[ "$(status "$API/me")" = 401 ] || fail "GET /me without a key"
[ "$(status "$API/products" -H "$AUTH")" = 200 ] || fail "GET /products"
GOV="$(psql_q "SELECT MIN(id) FROM $COMMERCE_SCHEMA.governorates")"
ORDER="$(curl -fs "$API/orders" -H "$AUTH" -H 'Content-Type: application/json' -H 'Idempotency-Key: ci-1' \
  -d "{\"full_name\":\"سارة حسن\",\"phone\":\"01112223334\",\"address\":\"12 شارع النصر\",\"governorate_id\":$GOV,\"shipping_option_id\":$OPTION,\"lines\":[{\"variant_id\":$VARIANT,\"quantity\":1,\"profit\":\"40.00\"}]}")" \
  || fail "POST /orders"
ORDER_ID="$(sed -n 's/^{"data":{"id":\([0-9]*\).*/\1/p' <<<"$ORDER")"
[ -n "$ORDER_ID" ] || fail "no order id in $ORDER"
# The operator move, through the app's back-office route.
[ "$(status -X POST "$BASE/admin/orders/$ORDER_ID/confirm")" = 401 ] || fail "admin route without its token"
[ "$(status -X POST "$BASE/admin/orders/$ORDER_ID/confirm" -H 'Authorization: Bearer secret')" = 401 ] \
  || fail "admin route with another token"
MOVED="$(curl -fs -X POST "$BASE/admin/orders/$ORDER_ID/confirm" -H "Authorization: Bearer $COMMERCE_ADMIN_TOKEN")" \
  || fail "operator move"
grep -q '"status":"order_confirmed"' <<<"$MOVED" || fail "operator move answered $MOVED"
curl -fs "$API/orders/$ORDER_ID" -H "$AUTH" | grep -q 'order_confirmed' || fail "the move is not seen by the API"
[ "$(status "$BASE/metrics")" = 401 ] || fail "GET /metrics without the token"
METRICS="$(curl -fs "$BASE/metrics" -H "Authorization: Bearer $COMMERCE_ADMIN_TOKEN")" || fail "GET /metrics"
for name in commerce_requests_total commerce_webhook_backlog commerce_webhook_open_breakers; do
  grep -q "^$name" <<<"$METRICS" || fail "no $name in /metrics"
done

# The owner pages are mounted behind the app's login (none wired here): 401.
[ "$(status "$BASE/account/")" = 401 ] || fail "GET /account/ without a session"

# SIGTERM while a 3 s request is in flight: it completes, then the process exits 0 within
# the drain bound (10 s) plus a margin.
SLOW_OUT="$(mktemp)"
curl -fs "$BASE/slow/3000" >"$SLOW_OUT" &
CURL=$!
# SIGTERM once the app has the request (it logs its start), not after a guessed pause.
for _ in $(seq 1 100); do
  grep -q "slow request started" "$LOG" && break
  sleep 0.1
done
grep -q "slow request started" "$LOG" || fail "the slow request never reached the app"
START=$(date +%s)
kill -TERM "$PID"
# The listener closes at once on SIGTERM; poll for it (bounded: 2 s) rather than guess a pause.
CLOSED=""
for _ in $(seq 1 20); do
  if [ "$(status --max-time 1 "$BASE/healthz")" = 000 ]; then CLOSED=1; break; fi
  sleep 0.1
done
[ -n "$CLOSED" ] || fail "still accepting connections 2 s after SIGTERM"
wait "$CURL" || fail "the slow request failed during the drain"
grep -q "slow request done" "$SLOW_OUT" || fail "the slow request did not complete: $(cat "$SLOW_OUT")"
rm -f "$SLOW_OUT"
CODE=0
for _ in $(seq 1 150); do
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$PID" 2>/dev/null && fail "still running 15 s after SIGTERM"
wait "$PID" || CODE=$?
PID=""
ELAPSED=$(($(date +%s) - START))
[ "$CODE" = 0 ] || fail "exit code $CODE"
[ "$ELAPSED" -le 12 ] || fail "took ${ELAPSED} s to stop (bound: 10 s drain)"
grep -q '"stopped"' "$LOG" || fail "no 'stopped' log line"
LEFT="$(psql_q "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = 'commerce_production' AND state LIKE 'idle in transaction%'")"
[ "$LEFT" = 0 ] || fail "$LEFT sessions left idle in transaction"
OPEN="$(psql_q "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = 'commerce_production'")"
[ "$OPEN" = 0 ] || fail "$OPEN sessions still open after the pool was closed"
grep -q '^{' "$LOG" || fail "no JSON log lines"
echo "production.sh: ok (order $ORDER_ID confirmed by the operator; slow request completed; exit 0 ${ELAPSED} s after SIGTERM; no session left)"
