#!/usr/bin/env bash
# The owner pages' onboarding in headless Chromium (tests/browser.rs): installs Debian's
# chromium and chromium-driver when chromedriver is absent (CI runs as root), then runs the
# test, which saves a screenshot of each page to docs/onboarding/.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromedriver >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "browser.sh: chromedriver is missing; install chromium and chromium-driver (as root)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium chromium-driver >/dev/null
fi
export CHROMEDRIVER="${CHROMEDRIVER:-$(command -v chromedriver)}"
export CHROMIUM="${CHROMIUM:-$(command -v chromium || echo /usr/bin/chromium)}"
cargo test --all-features --test browser -- --ignored --nocapture
