#!/usr/bin/env bash
# Builds the Lambda zips into dist/lambda/<name>.zip (ingest, ocr, validate, route, review-callback, review-api), each holding
# one executable `bootstrap`.
#
#   scripts/package.sh [--target local|aws] [--stand-in] [--print-selection]
#
#   --target local  (default) cargo build for this host (debug profile; PROFILE=release for
#                   release), for LocalStack, whose Lambda executor runs `bootstrap` as a process
#   --target aws    cargo lambda build --release --arm64 --output-format zip (cargo-lambda and
#                   its zig come from PyPI into the project venv on first use)
#   --stand-in      package the test function (tests/testfn, docket-testfn) as all four
#                   functions: lets the infrastructure be deployed before the real lambdas build
#   --print-selection  print the cargo package and feature arguments of the chosen target's
#                   build, one a line, and exit (tests/lint checks the AWS build's features)
#
# Fault injection (docket-aws feature `fault-injection`) is built into the local zips only. The
# AWS build selects just the Lambda packages, so no feature of the test crate (which enables it)
# is unified in, and its binaries have no injector.
#
# Environment: CARGO_TARGET_DIR (honoured; the Makefile exports it), PROFILE (dev|release, local
# only), DOCKET_VENV (.venv), DOCKET_ZIPS (where the zips go; dist/lambda). Zips are reproducible
# (fixed mtime, no extra attributes), so an unchanged binary gives a byte-identical zip and
# deploy.sh leaves the functions alone.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
venv=${DOCKET_VENV:-$root/.venv}
target=local
standin=""
print_selection=""
source "$root/scripts/functions.sh"

usage() { sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; }
say() { printf 'package: %s\n' "$*" >&2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --target) target=${2:?--target needs local or aws}; shift 2 ;;
    --target=*) target=${1#--target=}; shift ;;
    --stand-in) standin=yes; shift ;;
    --print-selection) print_selection=yes; shift ;;
    -h|--help) usage; exit 0 ;;
    *) say "unknown argument: $1"; usage >&2; exit 2 ;;
  esac
done
case "$target" in local|aws) ;; *) say "--target must be local or aws, not $target"; exit 2 ;; esac

# selection: what each build selects. Local: the whole workspace's binaries (so what `cargo test`
# already built is reused: building only the Lambda packages resolves other features of the SDK
# crates and rebuilds them) with fault injection. AWS: only the Lambda packages, no injection.
selection() {
  local f
  if [ "$target" = local ]; then
    printf '%s\n' --workspace --bins --features docket-aws/fault-injection
  else
    for f in "${functions[@]}"; do printf '%s\n' -p "docket-$f"; done
  fi
}
if [ -n "$print_selection" ]; then selection; exit 0; fi

out=${DOCKET_ZIPS:-$root/dist/lambda}
mkdir -p "$out"
# Local debug binaries are large and never leave the machine: compress fast.
if [ "$target" = local ]; then zip_level=1; else zip_level=9; fi
target_dir=${CARGO_TARGET_DIR:-$root/target}
stage=$(mktemp -d "${TMPDIR:-/tmp}/docket-package.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# zip_bootstrap <executable> <zip>: a zip with just `bootstrap` (mode 755), byte-reproducible.
zip_bootstrap() {
  local bin=$1 zipfile=$2
  mkdir -p "$stage/z"
  rm -f "$stage/z/bootstrap"
  cp "$bin" "$stage/z/bootstrap"
  chmod 755 "$stage/z/bootstrap"
  touch -d '1980-01-02 00:00:00 UTC' "$stage/z/bootstrap"
  rm -f "$stage/out.zip"
  (cd "$stage/z" && TZ=UTC zip -q -X "-$zip_level" "$stage/out.zip" bootstrap)
  # Replace only when the content changed (keeps the file's mtime otherwise).
  if ! cmp -s "$stage/out.zip" "$zipfile"; then mv "$stage/out.zip" "$zipfile"; fi
  say "$(basename "$zipfile"): $(du -h "$zipfile" | cut -f1) ($(sha256sum "$zipfile" | cut -c1-12))"
}

package_local() {
  local profile=${PROFILE:-dev} dir flag=()
  case "$profile" in
    dev|debug) dir=debug ;;
    release) dir=release; flag=(--release) ;;
    *) say "PROFILE must be dev or release, not $profile"; exit 2 ;;
  esac
  if [ -n "$standin" ]; then
    say "building docket-testfn ($dir) as a stand-in for ${functions[*]}"
    cargo build "${flag[@]}" -p docket-testfn
    for f in "${functions[@]}"; do zip_bootstrap "$target_dir/$dir/bootstrap" "$out/$f.zip"; done
    return
  fi
  local packages=() args
  for f in "${functions[@]}"; do packages+=(-p "docket-$f"); done
  mapfile -t args < <(selection)
  say "building ${packages[*]} ($dir, ${args[*]}) for $(uname -m) into $target_dir"
  cargo build "${flag[@]}" "${args[@]}"
  for f in "${functions[@]}"; do zip_bootstrap "$target_dir/$dir/$f" "$out/$f.zip"; done
}

ensure_cargo_lambda() {
  if command -v cargo-lambda >/dev/null 2>&1; then command -v cargo-lambda; return; fi
  if [ ! -x "$venv/bin/cargo-lambda" ]; then
    [ -x "$venv/bin/pip" ] || { say "no venv at $venv (run: scripts/localstack.sh install)"; exit 1; }
    say "installing cargo-lambda into $venv (pip; brings zig)"
    "$venv/bin/pip" install --quiet --progress-bar off cargo-lambda >&2
  fi
  echo "$venv/bin/cargo-lambda"
}

package_aws() {
  local cl bins=() packages=()
  cl=$(ensure_cargo_lambda)
  if command -v rustup >/dev/null 2>&1 \
      && ! rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then
    say "adding the Rust target aarch64-unknown-linux-gnu (rustup)"
    rustup target add aarch64-unknown-linux-gnu >&2
  fi
  # cargo-lambda finds zig (and itself) on PATH.
  export PATH="$venv/bin:$PATH"
  if [ -n "$standin" ]; then
    packages=(-p docket-testfn); bins=(bootstrap)
  else
    mapfile -t packages < <(selection)
    for f in "${functions[@]}"; do bins+=("$f"); done
  fi
  say "cargo lambda build --release --arm64 ${packages[*]}"
  "$cl" lambda build --release --arm64 --output-format zip --lambda-dir "$stage/cl" "${packages[@]}"
  local i=0 f src
  for f in "${functions[@]}"; do
    if [ -n "$standin" ]; then src=$stage/cl/bootstrap/bootstrap.zip; else src=$stage/cl/${bins[$i]}/bootstrap.zip; fi
    [ -f "$src" ] || { say "cargo lambda produced no $src"; exit 1; }
    # Re-zip through zip_bootstrap so the zips are reproducible like the local ones.
    rm -rf "$stage/unz" && mkdir -p "$stage/unz"
    (cd "$stage/unz" && unzip -q "$src")
    zip_bootstrap "$stage/unz/bootstrap" "$out/$f.zip"
    i=$((i + 1))
  done
}

case "$target" in
  local) package_local ;;
  aws) package_aws ;;
esac
say "done: $out/{$(IFS=,; echo "${functions[*]}")}.zip (target $target)"
