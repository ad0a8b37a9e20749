#!/usr/bin/env bash
# The normalized OCR of every labelled invoice that lacks one (tests/fixtures/invoices/*/*/ocr.json),
# from our local Textract. Starts LocalStack unless one of ours already runs (then leaves it
# running) and stops what it started. Arguments go to the example (--force, --only TEXT, --help).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
port=${LOCALSTACK_PORT:-4566}
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
  AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1

echo "eval-ocr: building" >&2
cargo build --workspace --example ocr_invoices --quiet --locked

started=""
if ! scripts/localstack.sh status >/dev/null 2>&1; then
  scripts/localstack.sh up
  started=yes
fi
stop() { [ -z "$started" ] || scripts/localstack.sh down; }
trap stop EXIT

"${CARGO_TARGET_DIR:-target}/debug/examples/ocr_invoices" "$@"
