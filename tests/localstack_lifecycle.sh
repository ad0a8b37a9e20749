#!/usr/bin/env bash
# Given no LocalStack on a spare port, when `make localstack-up` runs twice and a Lambda is invoked,
# then the second up is a no-op (same process), and after `make localstack-down` neither LocalStack
# nor any Lambda bootstrap process it started remains.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export LOCALSTACK_PORT=${LIFECYCLE_PORT:-4567}
export DOCKET_LOCAL_DIR
DOCKET_LOCAL_DIR=$(mktemp -d /tmp/docket-lifecycle.XXXXXX)
endpoint="http://127.0.0.1:$LOCALSTACK_PORT"
passed=0; failed=0
check() { # check "description" command...
  local what=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "ok: $what"; else failed=$((failed + 1)); echo "FAILED: $what"; fi
}
ours() { # pids of processes whose environment carries DOCKET_LOCALSTACK_PID=$1
  local env
  for env in /proc/[0-9]*/environ; do
    grep -qzx "DOCKET_LOCALSTACK_PID=$1" "$env" 2>/dev/null && { env=${env#/proc/}; echo "${env%/environ}"; }
  done
}
trap 'scripts/localstack.sh down >/dev/null 2>&1; rm -rf "$DOCKET_LOCAL_DIR"' EXIT

make -s localstack-up
first=$(cat "$DOCKET_LOCAL_DIR/localstack.pid")
second_says=$(make -s localstack-up 2>&1)
check "second up is a no-op" grep -q "already running (pid $first)" <<<"$second_says"
check "the same process still serves" test "$(cat "$DOCKET_LOCAL_DIR/localstack.pid")" = "$first"

# Start a Lambda so there is a bootstrap process to clean up.
bootstrap="$CARGO_TARGET_DIR/debug/bootstrap"
cargo build -q -p docket-testfn
zipdir=$(mktemp -d); cp "$bootstrap" "$zipdir/bootstrap"; (cd "$zipdir" && zip -q fn.zip bootstrap)
aws=("${DOCKET_VENV:-.venv}/bin/aws" --endpoint-url "$endpoint" --region us-east-1)
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
"${aws[@]}" lambda create-function --function-name lifecycle --runtime provided.al2023 \
  --handler bootstrap --role arn:aws:iam::000000000000:role/lambda --zip-file "fileb://$zipdir/fn.zip" >/dev/null
"${aws[@]}" lambda wait function-active-v2 --function-name lifecycle
"${aws[@]}" lambda invoke --function-name lifecycle \
  --payload '{"echo":"hi"}' "$zipdir/out.json" >/dev/null
check "the function answered" grep -q hi "$zipdir/out.json"
check "a bootstrap process runs for it" test -n "$(ours "$first")"
rm -rf "$zipdir"

make -s localstack-down
check "LocalStack process is gone" bash -c "! kill -0 $first 2>/dev/null"
check "no bootstrap process remains" test -z "$(ours "$first")"
check "pid file removed" test ! -e "$DOCKET_LOCAL_DIR/localstack.pid"

echo "lifecycle: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
