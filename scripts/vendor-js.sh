#!/usr/bin/env bash
# Refreshes the JavaScript libraries that `docket review serve` builds into the binary
# (crates/cli/assets/review/vendor/): pdf.js (PDF pages), and UTIF.js with pako's inflate (TIFF
# pages, which browsers cannot draw). Each goes to its own directory with its package's LICENSE
# and a VERSION file (the package, its version and integrity, and the sha256 of each file).
#
# Each package is fetched with `npm pack` at its pinned version and its tarball is checked
# against the pinned sha512 (the registry's `dist.integrity`) before anything is copied. The
# copied files are committed, so a cargo build never needs npm; this script is only how they are
# refreshed.
#
# To move a package to another version: change its line below (the integrity is
# `npm view <package>@<version> dist.integrity`), run this script, check the review page
# (README, "The review page") and commit the script with the files it wrote.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
vendor="$root/crates/cli/assets/review/vendor"

for tool in npm tar openssl base64 sha256sum; do
  command -v "$tool" >/dev/null || { echo "vendor-js: $tool is needed" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# vendor <package> <version> <integrity> <directory> <file in the package>...: copies the files
# (and the package's LICENSE) flat into vendor/<directory>, and writes its VERSION.
vendor() {
  local package=$1 version=$2 integrity=$3 dir=$4
  shift 4
  local unpacked="$work/$package" dest="$vendor/$dir" tarball actual file names=(LICENSE)
  mkdir -p "$unpacked"
  tarball=$(cd "$unpacked" && npm pack --silent "$package@$version")
  tarball="$unpacked/$tarball"
  [ -f "$tarball" ] || { echo "vendor-js: npm pack wrote nothing for $package" >&2; exit 1; }
  actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 | tr -d '\n')"
  if [ "$actual" != "$integrity" ]; then
    echo "vendor-js: $package $version does not match its pinned integrity" >&2
    echo "  pinned: $integrity" >&2
    echo "  got:    $actual" >&2
    exit 1
  fi
  tar -xzf "$tarball" -C "$unpacked"
  mkdir -p "$dest"
  install -m 0644 "$unpacked/package/LICENSE" "$dest/LICENSE"
  for file in "$@"; do
    install -m 0644 "$unpacked/package/$file" "$dest/$(basename "$file")"
    names+=("$(basename "$file")")
  done
  {
    echo "$package $version"
    echo "integrity $integrity"
    (cd "$dest" && sha256sum "${names[@]}")
  } >"$dest/VERSION"
  echo "vendor-js: $package $version → ${dest#"$root"/}"
}

vendor pdfjs-dist 6.5.438 \
  sha512-vg8Pw1x+AFKy4AMDvhuWl5cOYV8d698UoEANoFFhc79hqXDnZQqnOXoxw3HG907WHOg1JYOvLhP756boddFxpA== \
  pdfjs build/pdf.min.mjs build/pdf.worker.min.mjs
vendor utif 3.1.0 \
  sha512-WEo4D/xOvFW53K5f5QTaTbbiORcm2/pCL9P6qmJnup+17eYfKaEhDeX9PeQkuyEoIxlbGklDuGl8xwuXYMrrXQ== \
  utif UTIF.js
# UTIF.js inflates Deflate-compressed TIFF strips with the global `pako` (its dependency).
vendor pako 1.0.11 \
  sha512-4hLB8Py4zZce5s4yd9XzopqwVv/yGNhV1Bl8NTmCq1763HeK2+EwVTv+leGeL13Dnh2wfbqowVPXCIO0z4taYw== \
  pako dist/pako_inflate.min.js
