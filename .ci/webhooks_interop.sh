#!/usr/bin/env bash
# Interoperability: our webhook signatures verify with the Standard Webhooks reference library
# (Python, pinned), not only with commerce::webhooks::verify. The venv lives in the clone.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.ci/.venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check standardwebhooks==1.1.0
cargo build --quiet --workspace --all-features --example webhook_samples
"${CARGO_TARGET_DIR:-target}/debug/examples/webhook_samples" | "$venv/bin/python" .ci/webhooks_interop.py
