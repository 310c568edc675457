#!/usr/bin/env bash
# Every feature a user can pick, built on its own with clippy -D warnings: a combination CI never
# builds is one where dead code and missing imports go unseen.
#
# A user picks features on the `commerce` facade, and each of its features turns on the matching
# feature of commerce-core (and of commerce-store-sqlx for `sqlx-*`). Clippy lints every
# workspace crate a build compiles, so one clippy run per facade feature lints the library crates
# exactly as that feature builds them. The docs are checked with every feature on (as docs.rs
# builds them) by the api-snapshot's rustdoc run, with -D warnings; a rustdoc run per feature
# cost about a minute of CI for links that only a local `cargo doc` of that one feature shows.
set -euo pipefail
cd "$(dirname "$0")/.."

# check "<clippy's package and target>" [feature of the facade]
check() {
  local lint_features=(--no-default-features)
  if [ -n "${2:-}" ]; then
    lint_features+=(--features "$2")
  fi
  echo "== cargo clippy $1 ${lint_features[*]}"
  # shellcheck disable=SC2086 # $1 is a list of arguments
  cargo clippy --quiet $1 "${lint_features[@]}" -- -D warnings
}

# The SQL store's generic code with no backend (commerce-core with its `sqlx` feature alone).
check "-p commerce-store-sqlx --lib"
# The facade with nothing, then each feature alone.
check "-p commerce --lib"
for feature in axum warp http-server sandbox metrics webhooks; do
  check "-p commerce --lib" "$feature"
done
for feature in sqlx-sqlite sqlx-postgres; do
  check "-p commerce --lib" "$feature"
done
# The sandbox server binary on its own feature (what `cargo install` builds).
check "-p commerce --bin commerce-sandbox" sandbox-server
