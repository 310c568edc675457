#!/usr/bin/env bash
# The docs runner (.ci/docs_runner.py): every curl example of docs/ and the README, page by page
# in reading order against a fresh sandbox, each shown answer compared with the sandbox's; then
# the Python, Node and PHP webhook verifiers of docs/webhooks.md on real signed deliveries.
# Uses the sandbox and the webhook receiver the test step built (the build below is then a
# no-op: `--workspace` resolves features as the test step did, see .ci/run); installs Debian's php-cli when php is absent (CI runs as root).
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=/dev/null
source .ci/debian.sh
debian_install php php-cli
cargo build --quiet --workspace --all-features --example server --example webhook_receiver
python3 .ci/docs_runner.py
