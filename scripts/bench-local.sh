#!/usr/bin/env bash
# Local AWS benchmarks (figures, not pass/fail): LocalStack start-to-healthy with a warm venv,
# Lambda cold start / warm invoke round trip through LocalStack, and every release Lambda's zip
# size, init time and peak RSS through the local executor (a release build: ~10 minutes the first
# time). Uses a spare port and state dir so a running LocalStack is not disturbed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export LOCALSTACK_PORT=${BENCH_PORT:-4568}
export DOCKET_LOCAL_DIR
DOCKET_LOCAL_DIR=$(mktemp -d /tmp/docket-bench.XXXXXX)
trap 'scripts/localstack.sh down >/dev/null 2>&1 || true; rm -rf "$DOCKET_LOCAL_DIR"' EXIT

scripts/localstack.sh install
echo "bench: building the Lambda benchmark" >&2
cargo test --workspace --bench local_lambda --no-run --quiet

runs=${BENCH_START_RUNS:-3}
for i in $(seq 1 "$runs"); do
  t0=$(date +%s.%N)
  scripts/localstack.sh up 2>/dev/null
  t1=$(date +%s.%N)
  awk -v i="$i" -v a="$t0" -v b="$t1" 'BEGIN { printf "bench: localstack start to ready (warm venv), run %d: %.1f s\n", i, b - a }'
  [ "$i" -eq "$runs" ] || scripts/localstack.sh down 2>/dev/null
done

# A debug build of the bench client: the Lambda measured is the same either way, and a release
# build of the SDK crates takes ~10 minutes on these machines.
AWS_ENDPOINT_URL="http://127.0.0.1:$LOCALSTACK_PORT" cargo test --workspace --bench local_lambda

# The release Lambdas: built for this host (the executor runs them as processes), deployed as the
# stack, three invoices run through it, every function's REPORT lines read.
export DOCKET_ZIPS=$DOCKET_LOCAL_DIR/release-zips
echo "bench: building and deploying the release Lambdas (~10 minutes the first time)" >&2
PROFILE=release scripts/package.sh --target local
scripts/deploy.sh --local >/dev/null
AWS_ENDPOINT_URL="http://127.0.0.1:$LOCALSTACK_PORT" AWS_ACCESS_KEY_ID=test \
  AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1 \
  DOCKET_STACK_OUTPUTS="$DOCKET_LOCAL_DIR/stack-outputs.json" \
  cargo test --workspace --bench release_lambdas
