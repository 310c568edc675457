#!/usr/bin/env bash
# Every feature a user can pick, built on its own with clippy -D warnings, and documented on its
# own with rustdoc -D warnings: a combination CI never builds is one where dead code, missing
# imports and intra-doc links to items of another feature go unseen.
set -euo pipefail
cd "$(dirname "$0")/.."

check() {
  echo "== cargo clippy $*"
  cargo clippy --quiet "$@" -- -D warnings
  # `--lib` is clippy's; rustdoc documents the lib alone anyway.
  local args=()
  for arg in "$@"; do [ "$arg" = --lib ] || args+=("$arg"); done
  echo "== cargo doc ${args[*]}"
  RUSTDOCFLAGS='-D warnings' cargo doc --quiet --no-deps "${args[@]}"
}

# The library crates, lib targets only (the tests need the full set, built by .ci/run).
check -p commerce-core --lib --no-default-features
check -p commerce-core --lib --no-default-features --features sandbox
check -p commerce-core --lib --no-default-features --features metrics
check -p commerce-core --lib --no-default-features --features sqlx
check -p commerce-core --lib --no-default-features --features webhooks
check -p commerce-store-sqlx --lib --no-default-features
check -p commerce-store-sqlx --lib --no-default-features --features sqlite
check -p commerce-store-sqlx --lib --no-default-features --features postgres
check -p commerce --lib --no-default-features
for feature in axum warp sqlx-sqlite sqlx-postgres sandbox metrics webhooks; do
  check -p commerce --lib --no-default-features --features "$feature"
done
# The sandbox server binary on its own feature (what `cargo install` builds).
check -p commerce --bin commerce-sandbox --no-default-features --features sandbox-server
