#!/usr/bin/env bash
# make demo: start the local AWS, build and deploy the stack, drop the sample documents into the
# inbox, wait for them with a progress line, and print each one's result and audit trail.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
port=${LOCALSTACK_PORT:-4566}
step() { printf '\n==> %s\n' "$*" >&2; }

step "local AWS"
scripts/setup.sh
scripts/localstack.sh up
step "building the Lambdas (first build of the AWS SDK crates takes several minutes)"
scripts/package.sh --target local
step "deploying the stack to LocalStack"
scripts/deploy.sh --local >/dev/null
cargo build --quiet --workspace --bin docket
docket="${CARGO_TARGET_DIR:-target}/debug/docket"

export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
  AWS_REGION=us-east-1 DOCKET_STACK_OUTPUTS="${DOCKET_LOCAL_DIR:-$root/.localstack}/stack-outputs.json"

step "dropping samples/* into inbox/demo/"
documents=()
uploads=()
for file in samples/*; do
  uploaded=$("$docket" upload "$file" --tenant demo --output json)
  document=$(jq -r .documentId <<<"$uploaded")
  echo "   $file -> $document" >&2
  documents+=("$document")
  # The run of this upload (its S3 version), not an earlier demo's finished run of the same file.
  version=$(jq -r '.versionId // empty' <<<"$uploaded")
  uploads+=("$document${version:+@$version}")
done
step "waiting for the pipeline"
"$docket" wait "${uploads[@]}"

for document in "${documents[@]}"; do
  step "document $document"
  "$docket" show "$document"
  echo "   audit trail:"
  "$docket" audit show "$document" | sed 's/^/     /'
done
cat >&2 <<EOM

The local AWS keeps running (make localstack-down stops it). Try:
  make review     # the documents waiting for review, in your browser at http://127.0.0.1:8080/
  $docket upload samples/northwind-invoice.pdf --tenant demo   # a new version: a new run
  $docket audit verify --all
EOM
