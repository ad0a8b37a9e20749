#!/usr/bin/env bash
# make review: the review page for the local stack's demo tenant, as reviewer `you` (after make
# demo: its two documents waiting for review). Assumes the stack's reviewer role of tenant
# `demo` with LocalStack's STS, then runs `docket review serve` with that session, so that the
# page signs as that reviewer exactly as a real one's would. PORT= (default 8080), OPEN=1 opens
# a browser. Ctrl-C stops it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
port=${LOCALSTACK_PORT:-4566}
outputs="${DOCKET_LOCAL_DIR:-$root/.localstack}/stack-outputs.json"
[ -f "$outputs" ] || { echo "review: no local stack ($outputs); run make demo first" >&2; exit 1; }
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
  AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 DOCKET_STACK_OUTPUTS="$outputs"
role="$(jq -r .ReviewerRolePrefix "$outputs")demo"
creds=$(.venv/bin/aws sts assume-role --role-arn "arn:aws:iam::000000000000:role/$role" \
          --role-session-name you --query Credentials --output json)
export AWS_ACCESS_KEY_ID=$(jq -r .AccessKeyId <<<"$creds") \
       AWS_SECRET_ACCESS_KEY=$(jq -r .SecretAccessKey <<<"$creds") \
       AWS_SESSION_TOKEN=$(jq -r .SessionToken <<<"$creds")
cargo build --quiet --workspace --bin docket
exec "${CARGO_TARGET_DIR:-target}/debug/docket" review serve --port "${PORT:-8080}" ${OPEN:+--open}
