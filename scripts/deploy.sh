#!/usr/bin/env bash
# Deploys infra/template.yaml with the zips from scripts/package.sh (dist/lambda/*.zip).
#
#   scripts/deploy.sh --local|--aws [--stack NAME] [--region R]
#
#   --local   LocalStack at http://127.0.0.1:$LOCALSTACK_PORT (test credentials, us-east-1);
#             Architecture = this host's (uname -m); outputs also go to
#             $DOCKET_LOCAL_DIR/stack-outputs.json (default .localstack/)
#   --aws     the account of the normal credential chain; Architecture = arm64
#   --stack   stack name (default docket-$STAGE, STAGE default dev)
#   --region  region (local: us-east-1; aws: AWS_REGION / the CLI's configured region)
#
# Steps: ensure the artifacts bucket (local: docket-artifacts; aws: $ARTIFACTS_BUCKET or
# docket-artifacts-<account>-<region>), upload the zips under lambda/<content hash>/ (changed code,
# new keys, updated functions), `aws cloudformation package` (uploads the state machine definition
# named by DefinitionS3Location), `aws cloudformation deploy` (no-op when nothing changed) with
# config/pipeline.json's fingerprint as the config new runs start under, published to the stack's
# ConfigTable (`docket config publish`: before the deploy when the stack has the table, so that no
# function starts under a config it cannot read, and after it in any case).
# Progress goes to stderr; the stack outputs are printed to stdout as one JSON object.
#
# Environment: STAGE (dev), LOG_LEVEL (info), ALARM_TOPIC_ARN, ARTIFACTS_BUCKET,
# REVIEW_TIMEOUT_SECONDS (how long a document waits for a reviewer; template default 3 days),
# OCR_WAIT_SECONDS (how long a run's OCR waits for Textract's notification before it polls;
# template default 5 minutes),
# PIPELINE_DEPLOYMENT (ALL_AT_ONCE, CANARY or LINEAR: how the live alias moves to a new machine
# version; LocalStack applies all three at once),
# DOCKET_ASL (state machine definition; default statemachines/document-pipeline.asl.json),
# LOCALSTACK_PORT (4566), DOCKET_LOCAL_DIR (.localstack), DOCKET_VENV (.venv), DOCKET_ZIPS (the
# zips' directory, dist/lambda).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
venv=${DOCKET_VENV:-$root/.venv}
mode=""
stage=${STAGE:-dev}
stack=""
region=""
source "$root/scripts/functions.sh"

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }
say() { printf 'deploy: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --local) mode=local; shift ;;
    --aws) mode=aws; shift ;;
    --stack) stack=${2:?--stack needs a name}; shift 2 ;;
    --stack=*) stack=${1#--stack=}; shift ;;
    --region) region=${2:?--region needs a region}; shift 2 ;;
    --region=*) region=${1#--region=}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) say "unknown argument: $1"; usage >&2; exit 2 ;;
  esac
done
[ -n "$mode" ] || { usage >&2; exit 2; }
stack=${stack:-docket-$stage}

template=$root/infra/template.yaml
asl=${DOCKET_ASL:-$root/statemachines/document-pipeline.asl.json}
[ -f "$asl" ] || die "no state machine definition at $asl (set DOCKET_ASL to use another file)"
zips=${DOCKET_ZIPS:-dist/lambda}
for f in "${functions[@]}"; do
  [ -f "$zips/$f.zip" ] || die "missing $zips/$f.zip: run scripts/package.sh --target $mode first"
done

if [ "$mode" = local ]; then
  port=${LOCALSTACK_PORT:-4566}
  local_dir=${DOCKET_LOCAL_DIR:-$root/.localstack}
  [ -x "$venv/bin/aws" ] || die "no $venv/bin/aws: run scripts/localstack.sh install"
  # The environment variable, not only --endpoint-url: `cloudformation package` makes its own S3
  # client, which ignores the command-line endpoint.
  export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_ENDPOINT_URL="http://127.0.0.1:$port"
  unset AWS_PROFILE AWS_SESSION_TOKEN
  region=${region:-us-east-1}
  aws_cmd=("$venv/bin/aws" --endpoint-url "$AWS_ENDPOINT_URL")
  case "$(uname -m)" in
    x86_64|amd64) arch=x86_64 ;;
    aarch64|arm64) arch=arm64 ;;
    *) die "unsupported host architecture $(uname -m)" ;;
  esac
  curl -fsS -m 3 "http://127.0.0.1:$port/_localstack/health" >/dev/null 2>&1 \
    || die "LocalStack does not answer on 127.0.0.1:$port (make localstack-up)"
else
  if [ -n "${AWS_ENDPOINT_URL:-}" ]; then
    say "ignoring AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL for --aws"; unset AWS_ENDPOINT_URL
  fi
  if command -v aws >/dev/null 2>&1; then aws_cmd=(aws); else aws_cmd=("$venv/bin/aws"); fi
  region=${region:-${AWS_REGION:-${AWS_DEFAULT_REGION:-$("${aws_cmd[@]}" configure get region 2>/dev/null || true)}}}
  [ -n "$region" ] || die "no region: pass --region or set AWS_REGION"
  arch=arm64
fi
export AWS_REGION=$region AWS_DEFAULT_REGION=$region AWS_PAGER=""
aws() { "${aws_cmd[@]}" --region "$region" "$@"; }

# 1. Artifacts bucket.
if [ "$mode" = local ]; then
  bucket=${ARTIFACTS_BUCKET:-docket-artifacts}
else
  account=$(aws sts get-caller-identity --query Account --output text)
  bucket=${ARTIFACTS_BUCKET:-docket-artifacts-$account-$region}
fi
if ! aws s3api head-bucket --bucket "$bucket" >/dev/null 2>&1; then
  say "creating artifacts bucket $bucket"
  if [ "$region" = us-east-1 ]; then
    aws s3api create-bucket --bucket "$bucket" >/dev/null
  else
    aws s3api create-bucket --bucket "$bucket" \
      --create-bucket-configuration "LocationConstraint=$region" >/dev/null
  fi
  aws s3api put-public-access-block --bucket "$bucket" --public-access-block-configuration \
    BlockPublicAcls=true,IgnorePublicAcls=true,BlockPublicPolicy=true,RestrictPublicBuckets=true
  aws s3api put-bucket-encryption --bucket "$bucket" --server-side-encryption-configuration \
    '{"Rules":[{"ApplyServerSideEncryptionByDefault":{"SSEAlgorithm":"AES256"}}]}'
fi

# 2. Lambda zips under a content-hash prefix (architecture included: same code, other arch,
# other binaries anyway, but keep keys distinct).
code_hash=$(cat $(printf "$zips/%s.zip " "${functions[@]}") | sha256sum | cut -c1-16)
prefix=lambda/$arch-$code_hash
for f in "${functions[@]}"; do
  if aws s3api head-object --bucket "$bucket" --key "$prefix/$f.zip" >/dev/null 2>&1; then
    say "s3://$bucket/$prefix/$f.zip already uploaded"
  else
    say "uploading s3://$bucket/$prefix/$f.zip"
    aws s3 cp --only-show-errors "$zips/$f.zip" "s3://$bucket/$prefix/$f.zip" >&2
  fi
done

# 3. State machine definitions: stage the template next to the definitions so that the template's
# relative DefinitionS3Locations (../statemachines/*.asl.json) find them, then let
# `cloudformation package` upload it and rewrite the property to {Bucket, Key}.
work=$root/dist/cfn
rm -rf "$work" && mkdir -p "$work/infra" "$work/statemachines"
cp "$template" "$work/infra/template.yaml"
# Normalised (parsed and re-printed, key order kept) so that a whitespace-only edit changes
# neither the uploaded definition nor DefinitionHash, i.e. publishes no version.
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(json.dumps(d, indent=2, ensure_ascii=False))' \
  "$asl" > "$work/statemachines/document-pipeline.asl.json" || die "$asl is not valid JSON"
definition_hash=$(sha256sum "$work/statemachines/document-pipeline.asl.json" | cut -c1-16)
# The bulk reprocess machine is unversioned (an execution keeps the definition it started with).
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(json.dumps(d, indent=2, ensure_ascii=False))' \
  "$root/statemachines/bulk-reprocess.asl.json" > "$work/statemachines/bulk-reprocess.asl.json" \
  || die "statemachines/bulk-reprocess.asl.json is not valid JSON"
# In each step function's version Description: a template edit (an environment variable, a
# timeout, memory) publishes new Lambda versions as a code change does.
template_hash=$(sha256sum "$template" | cut -c1-16)
say "packaging (definition sha256:$definition_hash)"
# (Its upload progress has no newline; keep it for errors only.)
if ! err=$(aws cloudformation package --template-file "$work/infra/template.yaml" --s3-bucket "$bucket" \
    --s3-prefix cfn --output-template-file "$work/template.packaged.yaml" 2>&1 >/dev/null); then
  printf '%s\n' "$err" >&2; die "cloudformation package failed"
fi

# 4. Deploy. Templates over 51,200 bytes must go through S3.
say "building the docket CLI (config fingerprint and publish)"
cargo build --quiet --locked --workspace --bin docket
docket=${CARGO_TARGET_DIR:-$root/target}/debug/docket
config_fingerprint=$("$docket" config fingerprint config/pipeline.json)
# Writes the stack's outputs to $1 (one JSON object); prints them.
outputs_to() {
  aws cloudformation describe-stacks --stack-name "$stack" --output json \
    --query 'Stacks[0].Outputs' | python3 -c \
    'import json, sys; print(json.dumps({o["OutputKey"]: o["OutputValue"] for o in json.load(sys.stdin) or []}, indent=2, sort_keys=True))' \
    | tee "$1"
}
publish_config() {
  say "publishing config $config_fingerprint"
  "$docket" --outputs "$1" config publish config/pipeline.json --by docket/deploy >&2
}
params=(Stage="$stage" Architecture="$arch" CodeBucket="$bucket" CodeKeyPrefix="$prefix"
        LogLevel="${LOG_LEVEL:-info}" DefinitionHash="$definition_hash" TemplateHash="$template_hash"
        ConfigFingerprint="$config_fingerprint")
[ -z "${ALARM_TOPIC_ARN:-}" ] || params+=(AlarmTopicArn="$ALARM_TOPIC_ARN")
[ -z "${REVIEW_TIMEOUT_SECONDS:-}" ] || params+=(ReviewTimeoutSeconds="$REVIEW_TIMEOUT_SECONDS")
[ -z "${OCR_WAIT_SECONDS:-}" ] || params+=(OcrWaitSeconds="$OCR_WAIT_SECONDS")
[ -z "${PIPELINE_DEPLOYMENT:-}" ] || params+=(PipelineDeployment="$PIPELINE_DEPLOYMENT")
via_s3=()
[ "$(wc -c < "$work/template.packaged.yaml")" -le 51200 ] || via_s3=(--s3-bucket "$bucket" --s3-prefix cfn)

status=$(aws cloudformation describe-stacks --stack-name "$stack" --query 'Stacks[0].StackStatus' \
  --output text 2>/dev/null || echo NONE)
if [ "$status" = ROLLBACK_COMPLETE ]; then
  if [ "$mode" = local ]; then
    say "stack $stack is ROLLBACK_COMPLETE (a failed create); deleting it first"
    aws cloudformation delete-stack --stack-name "$stack"
    aws cloudformation wait stack-delete-complete --stack-name "$stack"
  else
    die "stack $stack is ROLLBACK_COMPLETE (a failed create): delete it, then deploy again"
  fi
fi

scratch=$(mktemp -d) && trap 'rm -rf "$scratch"' EXIT
if [ "$status" != NONE ] && outputs_to "$scratch/before.json" >/dev/null \
    && grep -q '"ConfigTable"' "$scratch/before.json"; then
  publish_config "$scratch/before.json"
fi
say "deploying stack $stack ($mode, $region, $arch, code $prefix, config $config_fingerprint)"
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
if ! aws cloudformation deploy --template-file "$work/template.packaged.yaml" --stack-name "$stack" \
    --capabilities CAPABILITY_IAM CAPABILITY_NAMED_IAM --no-fail-on-empty-changeset \
    "${via_s3[@]}" --parameter-overrides "${params[@]}" >&2; then
  say "failed; the stack's failed events since $started:"
  aws cloudformation describe-stack-events --stack-name "$stack" --output text \
    --query "StackEvents[?Timestamp>='$started' && contains(ResourceStatus, 'FAILED')].[LogicalResourceId,ResourceStatus,ResourceStatusReason]" >&2 || true
  exit 1
fi
say "stack $stack: $(aws cloudformation describe-stacks --stack-name "$stack" --query 'Stacks[0].StackStatus' --output text)"

# 5. Outputs as one JSON object; the config published (again: a no-op unless the stack is new).
outputs=$(outputs_to "$scratch/after.json")
publish_config "$scratch/after.json"
if [ "$mode" = local ]; then
  mkdir -p "$local_dir"
  printf '%s\n' "$outputs" > "$local_dir/stack-outputs.json"
  say "outputs written to $local_dir/stack-outputs.json"
fi
printf '%s\n' "$outputs"
