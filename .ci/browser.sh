#!/usr/bin/env bash
# The owner pages' onboarding in headless Chromium (dev/tests/browser.rs): installs Debian's
# chromium and chromium-driver when chromedriver is absent (CI runs as root), then runs the
# test, which saves a screenshot of each page to docs/onboarding/.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=/dev/null
source .ci/debian.sh
debian_install chromedriver chromium chromium-driver
export CHROMEDRIVER="${CHROMEDRIVER:-$(command -v chromedriver)}"
export CHROMIUM="${CHROMIUM:-$(command -v chromium || echo /usr/bin/chromium)}"
cargo test --workspace --all-features --test browser -- --ignored --nocapture
