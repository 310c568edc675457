#!/usr/bin/env bash
# Every feature a user can pick, built on its own with clippy -D warnings, and documented on its
# own with rustdoc -D warnings: a combination CI never builds is one where dead code, missing
# imports and intra-doc links to items of another feature go unseen.
#
# A user picks features on the `commerce` facade, and each of its features turns on the matching
# feature of commerce-core (and of commerce-store-sqlx for `sqlx-*`). Clippy lints every
# workspace crate a build compiles, so one clippy run per facade feature lints the library crates
# exactly as that feature builds them; rustdoc documents them together with it.
set -euo pipefail
cd "$(dirname "$0")/.."

# check "<packages rustdoc documents>" "<clippy's package and target>" [feature of the facade]
check() {
  local docs=() lint_features=(--no-default-features) doc_features=(--no-default-features)
  for package in $1; do docs+=(-p "$package"); done
  if [ -n "${3:-}" ]; then
    # One package for clippy (and a `--bin` needs the plain name); several for rustdoc.
    lint_features+=(--features "$3")
    doc_features+=(--features "commerce/$3")
  fi
  echo "== cargo clippy $2 ${lint_features[*]}"
  # shellcheck disable=SC2086 # $2 is a list of arguments
  cargo clippy --quiet $2 "${lint_features[@]}" -- -D warnings
  echo "== cargo doc ${docs[*]} ${doc_features[*]}"
  RUSTDOCFLAGS='-D warnings' cargo doc --quiet --no-deps "${docs[@]}" "${doc_features[@]}"
}

# The SQL store's generic code with no backend (commerce-core with its `sqlx` feature alone).
check "commerce-store-sqlx commerce-core" "-p commerce-store-sqlx --lib"
# The facade with nothing, then each feature alone.
check "commerce commerce-core" "-p commerce --lib"
for feature in axum warp http-server sandbox metrics webhooks; do
  check "commerce commerce-core" "-p commerce --lib" "$feature"
done
for feature in sqlx-sqlite sqlx-postgres; do
  check "commerce commerce-core commerce-store-sqlx" "-p commerce --lib" "$feature"
done
# The sandbox server binary on its own feature (what `cargo install` builds).
check "commerce commerce-core" "-p commerce --bin commerce-sandbox" sandbox-server
