# The Lambda functions of the stack (one binary lambdas/<name>, one zip dist/lambda/<name>.zip,
# one `<Name>Function` in infra/template.yaml). Sourced by package.sh and deploy.sh.
functions=(ingest ocr ocr-notified validate route compensate review-callback review-api audit-digest accounts-payable reprocess)
