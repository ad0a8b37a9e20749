#!/usr/bin/env bash
# Installs what docket needs on a fresh Debian machine (idempotent; quick when all is there):
# Debian packages for OCR and packaging (with --browser: Chromium and its WebDriver, for the
# review page's tests), and the Rust components used by `make lint`.
# The LocalStack venv is created by scripts/localstack.sh install.
set -euo pipefail

packages=(tesseract-ocr tesseract-ocr-eng poppler-utils zip unzip curl jq)
# --browser: also the headless browser the review page's tests drive (tests/browser), and
# libtiff's tools, with which they make a multi-page TIFF.
[ "${1:-}" != "--browser" ] || packages+=(chromium chromium-driver libtiff-tools)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  # Another apt on the machine (a second checkout's setup, unattended upgrades) may hold dpkg's
  # lock: wait up to 10 minutes for it rather than fail.
  apt=(apt-get -o DPkg::Lock::Timeout=600)
  $sudo "${apt[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive $sudo "${apt[@]}" install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

command -v cargo >/dev/null || { echo "setup: cargo not found; install Rust with rustup first" >&2; exit 1; }
for component in rustfmt clippy; do
  rustup component list --installed 2>/dev/null | grep -q "^$component" || rustup component add "$component"
done
