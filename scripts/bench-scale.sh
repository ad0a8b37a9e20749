#!/usr/bin/env bash
# Scale benchmark (figures, not pass/fail; tests/benches/scale.rs says what it prints): deploys
# the stack to a LocalStack of its own (spare port and state dir: the quotas it lowers and the
# requests it counts are its own) and drops BENCH_SCALE_DOCS one-page documents (1,000) into the
# inbox at once. The other BENCH_SCALE_* settings are the bench's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export LOCALSTACK_PORT=${BENCH_PORT:-4571}
export DOCKET_LOCAL_DIR
DOCKET_LOCAL_DIR=$(mktemp -d /tmp/docket-bench-scale.XXXXXX)
# The local Textract's OCR cache, kept between runs: the first run reads every invoice once.
export DOCKET_TEXTRACT_CACHE_DIR=${DOCKET_TEXTRACT_CACHE_DIR:-$HOME/.cache/docket/textract-cache}
mkdir -p "$DOCKET_TEXTRACT_CACHE_DIR"
trap 'scripts/localstack.sh down >/dev/null 2>&1 || true; rm -rf "$DOCKET_LOCAL_DIR"' EXIT

scripts/localstack.sh up
scripts/package.sh --target local
scripts/deploy.sh --local >/dev/null
export AWS_ENDPOINT_URL="http://127.0.0.1:$LOCALSTACK_PORT" AWS_ACCESS_KEY_ID=test \
  AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1 \
  DOCKET_STACK_OUTPUTS="$DOCKET_LOCAL_DIR/stack-outputs.json"
cargo build -p docket-cli  # the bench records docket's quotas through the CLI
# A debug build of the bench client (what it measures runs in LocalStack and the Lambdas).
cargo test -p docket-e2e --bench scale
