#!/usr/bin/env bash
# Refreshes the pdf.js files that `docket review serve` builds into the binary
# (crates/cli/assets/review/vendor/pdfjs/): pdf.min.mjs, pdf.worker.min.mjs, the package's
# LICENSE and a VERSION file (the version and the sha256 of each file).
#
# The package is fetched with `npm pack` at the pinned version and its tarball is checked against
# the pinned sha512 (the registry's `dist.integrity`) before anything is copied. The copied files
# are committed, so a cargo build never needs npm; this script is only how they are refreshed.
#
# To move to another version: set PDFJS_VERSION and PDFJS_INTEGRITY together (the integrity is
# `npm view pdfjs-dist@<version> dist.integrity`), run this script, check the review page
# (README, "Reviewing documents") and commit the script with the files it wrote.
set -euo pipefail

PDFJS_VERSION=6.5.438
PDFJS_INTEGRITY=sha512-vg8Pw1x+AFKy4AMDvhuWl5cOYV8d698UoEANoFFhc79hqXDnZQqnOXoxw3HG907WHOg1JYOvLhP756boddFxpA==

root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/crates/cli/assets/review/vendor/pdfjs"

for tool in npm tar openssl base64 sha256sum; do
  command -v "$tool" >/dev/null || { echo "vendor-pdfjs: $tool is needed" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm pack --silent "pdfjs-dist@$PDFJS_VERSION" >/dev/null)
tarball="$work/pdfjs-dist-$PDFJS_VERSION.tgz"
[ -f "$tarball" ] || { echo "vendor-pdfjs: npm pack wrote no $(basename "$tarball")" >&2; exit 1; }

actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 | tr -d '\n')"
if [ "$actual" != "$PDFJS_INTEGRITY" ]; then
  echo "vendor-pdfjs: pdfjs-dist $PDFJS_VERSION does not match its pinned integrity" >&2
  echo "  pinned: $PDFJS_INTEGRITY" >&2
  echo "  got:    $actual" >&2
  exit 1
fi

tar -xzf "$tarball" -C "$work"
pkg="$work/package"
mkdir -p "$dest"
install -m 0644 "$pkg/build/pdf.min.mjs" "$dest/pdf.min.mjs"
install -m 0644 "$pkg/build/pdf.worker.min.mjs" "$dest/pdf.worker.min.mjs"
install -m 0644 "$pkg/LICENSE" "$dest/LICENSE"

{
  echo "pdfjs-dist $PDFJS_VERSION"
  echo "integrity $PDFJS_INTEGRITY"
  (cd "$dest" && sha256sum LICENSE pdf.min.mjs pdf.worker.min.mjs)
} >"$dest/VERSION"

echo "vendor-pdfjs: pdfjs-dist $PDFJS_VERSION → ${dest#"$root"/}"
cat "$dest/VERSION"
