#!/usr/bin/env bash
# End-to-end tests against LocalStack. Starts it unless one of ours already runs (then leaves it
# running), stops what it started on every exit, and finally checks the up/up/down lifecycle on a
# separate port.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
port=${LOCALSTACK_PORT:-4566}
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
  AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1

echo "test-local: building the tests before LocalStack starts" >&2
cargo test --workspace --no-run --quiet --locked

started=""
if ! scripts/localstack.sh status >/dev/null 2>&1; then
  scripts/localstack.sh up
  started=yes
fi
stop() { [ -z "$started" ] || scripts/localstack.sh down; }
trap stop EXIT

cargo test --workspace --test localaws -- --test-threads "${TEST_THREADS:-4}"

echo "test-local: deploying the stack to LocalStack" >&2
scripts/package.sh --target local
# Deployed twice: first with the template's 3-day review wait and a quieter log filter than
# `make demo`'s (so that no run of the demo shares the machine version the first phase starts a
# run on), then as the tests need it (45 s, so that the escalation test does not wait days; an OCR
# wait of 60 s, so that a lost notification's fallback is seen within the soak; and the default
# log filter). Every run thus redeploys a changed definition and changed step functions:
# tests/pipeline/deploy.rs checks that new executions run on the new ones, and
# tests/pipeline/across_deploy.rs that a run which waited in review across the deploy finishes on
# the versions it started on (its first phase starts that run between the two deploys). The
# second deploy is a canary (applied at once locally), as an AWS user's would be.
# (Every parameter is given: `deploy` keeps a parameter's previous value where none is given.)
REVIEW_TIMEOUT_SECONDS=259200 OCR_WAIT_SECONDS=300 LOG_LEVEL=info,aws_config=warn \
  PIPELINE_DEPLOYMENT=ALL_AT_ONCE scripts/deploy.sh --local >/dev/null
cargo test --workspace --test pipeline -- --ignored --exact \
  across_deploy::before_a_redeploy_a_run_waits_in_review
REVIEW_TIMEOUT_SECONDS=45 OCR_WAIT_SECONDS=60 LOG_LEVEL=info PIPELINE_DEPLOYMENT=CANARY \
  scripts/deploy.sh --local >/dev/null
cargo test --workspace --test pipeline -- --test-threads "${TEST_THREADS:-4}"
echo "test-local: the review page in headless Chromium" >&2
cargo test --workspace --test browser -- --test-threads 1 --nocapture
# Alone: it lowers the quotas every run of the stack keeps to (tests/pipeline/quotas.rs).
cargo test --workspace --test pipeline -- --ignored --exact \
  quotas::documents_dropped_at_once_keep_to_textracts_quotas_and_all_complete
echo "test-local: faults through the deployed stack (throttling bursts, 100-document soak)" >&2
cargo test --workspace --test soak -- --test-threads 1 --nocapture

stop; started=""
tests/localstack_lifecycle.sh
