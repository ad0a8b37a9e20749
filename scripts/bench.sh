#!/usr/bin/env bash
# Pipeline benchmarks (figures, not pass/fail): deploys the stack to a LocalStack of its own
# (spare port and state dir, so request counts and lowered quotas are not mixed with anything
# else) and runs against it
# - with no argument (`make bench`): tests/benches/pipeline.rs, tests/benches/reprocess.rs and
#   the mixed-fault soak;
# - with `scale` (`make bench-scale`): tests/benches/scale.rs, BENCH_SCALE_DOCS one-page
#   documents (1,000) dropped at once under lowered Textract quotas (the other BENCH_SCALE_*
#   settings are the bench's).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export LOCALSTACK_PORT=${BENCH_PORT:-4569}
export DOCKET_LOCAL_DIR
DOCKET_LOCAL_DIR=$(mktemp -d /tmp/docket-bench.XXXXXX)
trap 'scripts/localstack.sh down >/dev/null 2>&1 || true; rm -rf "$DOCKET_LOCAL_DIR"' EXIT

if [ "${1:-}" = scale ]; then
  # The local Textract's OCR cache, kept between runs: the first run reads every invoice once.
  export DOCKET_TEXTRACT_CACHE_DIR=${DOCKET_TEXTRACT_CACHE_DIR:-$HOME/.cache/docket/textract-cache}
  mkdir -p "$DOCKET_TEXTRACT_CACHE_DIR"
fi
scripts/localstack.sh up
scripts/package.sh --target local
scripts/deploy.sh --local >/dev/null
export AWS_ENDPOINT_URL="http://127.0.0.1:$LOCALSTACK_PORT" AWS_ACCESS_KEY_ID=test \
  AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1 \
  DOCKET_STACK_OUTPUTS="$DOCKET_LOCAL_DIR/stack-outputs.json" \
  DOCKET_LOCALSTACK_LOG="$DOCKET_LOCAL_DIR/localstack.log"
cargo build --workspace --bin docket  # the scale bench records quotas, the soak redrives, through the CLI
if [ "${1:-}" = scale ]; then
  cargo test --workspace --bench scale
  exit 0
fi
# A debug build of the bench client (what it measures runs in LocalStack and the Lambdas).
cargo test --workspace --bench pipeline
# Bulk reprocess of BENCH_REPROCESS_DOCS documents (1,000 by default; their first run takes most
# of the time: each is OCRed once).
cargo test --workspace --bench reprocess
# The mixed-fault soak of make test with BENCH_SOAK_DOCS documents (500 by default): the same
# faults and the same counts (every document completed, or unresolved with an owner; none failed,
# lost or duplicated), at five times the volume.
SOAK_DOCUMENTS=${BENCH_SOAK_DOCS:-500} cargo test --workspace --test soak -- --test-threads 1 \
  --nocapture a_soak_with_mixed_faults
