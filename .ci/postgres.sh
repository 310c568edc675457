# shellcheck shell=bash
# Sourced by .ci/run: makes a PostgreSQL server reachable on 127.0.0.1:5432 and exports
# COMMERCE_TEST_POSTGRES_URL for the commerce-store-sqlx tests. Safe under `set -euo pipefail`.
#
# 1. If a server already answers on 127.0.0.1:5432, it is used as it is.
# 2. Otherwise Debian's `postgresql` package is installed (if needed) and its cluster started,
#    with the local connections of user `postgres` trusted.
# 3. The database `test` is created if missing. If the server still cannot be reached, this
#    fails (non-zero), so CI does not silently skip the PostgreSQL tests.

commerce_pg_host=127.0.0.1
commerce_pg_port=5432

commerce_pg_ready() {
  command -v pg_isready >/dev/null 2>&1 \
    && pg_isready -q -h "$commerce_pg_host" -p "$commerce_pg_port"
}

commerce_pg_as_postgres() {
  if [ "$(id -u)" = 0 ]; then
    su postgres -c "$*"
  else
    sudo -u postgres sh -c "$*"
  fi
}

if ! commerce_pg_ready; then
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    echo "postgres.sh: no PostgreSQL answering on ${commerce_pg_host}:${commerce_pg_port}; installing it" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y postgresql
  fi
  commerce_pg_version="$(ls /etc/postgresql | sort -V | tail -n 1)"
  commerce_pg_conf="/etc/postgresql/${commerce_pg_version}/main"
  # Trust local TCP connections (a throwaway CI server), listen on 127.0.0.1:5432.
  if [ -w "${commerce_pg_conf}/pg_hba.conf" ]; then
    sed -i -E 's/^(host[[:space:]]+all[[:space:]]+all[[:space:]]+127\.0\.0\.1\/32[[:space:]]+)[a-z0-9-]+/\1trust/' \
      "${commerce_pg_conf}/pg_hba.conf"
    sed -i -E 's/^(local[[:space:]]+all[[:space:]]+postgres[[:space:]]+)[a-z0-9-]+/\1trust/' \
      "${commerce_pg_conf}/pg_hba.conf"
  fi
  pg_ctlcluster --skip-systemctl-redirect "$commerce_pg_version" main start || true
  # The package may have started the cluster before pg_hba.conf was changed.
  pg_ctlcluster --skip-systemctl-redirect "$commerce_pg_version" main reload || true
  for _ in $(seq 1 30); do
    if commerce_pg_ready; then break; fi
    sleep 1
  done
fi

if ! commerce_pg_ready; then
  echo "postgres.sh: PostgreSQL is still not reachable on ${commerce_pg_host}:${commerce_pg_port}" >&2
  return 1 2>/dev/null || exit 1
fi

# The test database (each test makes its own schema in it).
if ! psql -h "$commerce_pg_host" -p "$commerce_pg_port" -U postgres -d test -Atc 'SELECT 1' >/dev/null 2>&1; then
  psql -h "$commerce_pg_host" -p "$commerce_pg_port" -U postgres -d postgres -c 'CREATE DATABASE test' >/dev/null 2>&1 \
    || commerce_pg_as_postgres "createdb test" \
    || true
fi
if ! psql -h "$commerce_pg_host" -p "$commerce_pg_port" -U postgres -d test -Atc 'SELECT 1' >/dev/null 2>&1; then
  echo "postgres.sh: cannot connect as postgres to database test on ${commerce_pg_host}:${commerce_pg_port}" >&2
  return 1 2>/dev/null || exit 1
fi

export COMMERCE_TEST_POSTGRES_URL="postgres://postgres@${commerce_pg_host}:${commerce_pg_port}/test"
echo "postgres.sh: PostgreSQL tests will use ${COMMERCE_TEST_POSTGRES_URL}" >&2
