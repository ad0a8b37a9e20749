# docket: thin wrappers over cargo and scripts/. `make help` lists the targets.

# Builds are cached outside the clone, one directory per clone (by its path), kept between runs.
# Not one directory for all clones: cargo names a workspace crate's artifacts and fingerprints
# without the clone's path, so a clone whose files are older than another clone's last build
# would run that clone's code. `make -s target-dir` prints it.
CARGO_TARGET_DIR ?= $(HOME)/.cache/docket/clones/$(shell printf '%s' '$(CURDIR)' | sha256sum | cut -c1-12)/target
export CARGO_TARGET_DIR
LOCALSTACK_PORT ?= 4566
export LOCALSTACK_PORT
# deploy / deploy-local: STACK (default docket-$(STAGE)), REGION (AWS: the CLI's region), STAGE (dev).
STACK ?=
REGION ?=
CARGO_DENY_VERSION := 0.20.2
CHECKOV_VERSION := 3.3.30
CARGO_MUTANTS_VERSION := 27.1.0
# make mutants: by default the rule modules of docket-core (ledger, audit chain and digests, ids,
# steps, review rules and decisions, the saga), ~400 mutants: about an hour at ~8 s a mutant (one job,
# two shared cores; the first run also builds the dependencies, ~3 minutes).
# MUTANTS_ARGS= (empty) mutates all of docket-core (~810 mutants); MUTANTS_ARGS='--file X' one file.
MUTANTS_ARGS ?= --file crates/core/src/ledger.rs --file crates/core/src/audit.rs \
        --file crates/core/src/audit/digest.rs --file crates/core/src/ids.rs \
        --file crates/core/src/model/step.rs --file 'crates/core/src/steps/*.rs' \
        --file crates/core/src/review/rules.rs --file crates/core/src/review/decision.rs \
        --file 'crates/core/src/saga/*.rs' --file 'crates/core/src/steps/saga/*.rs'
# Where cargo-deny keeps the RustSec advisory database (its default).
ADVISORY_DBS = $${CARGO_HOME:-$$HOME/.cargo}/advisory-dbs

.DEFAULT_GOAL := help
.PHONY: demo bench help target-dir setup localstack-up localstack-down localstack-logs localstack-status \
        lint fmt test test-unit test-local bench-local bench-scale eval eval-ocr screenshots review \
        build package-local deploy-local deploy cfn-lint checkov lint-python deny mutants

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-18s %s\n", $$1, $$2}'

target-dir: ## print where this clone's Rust builds go (CARGO_TARGET_DIR)
	@echo $(CARGO_TARGET_DIR)

setup: ## install Debian packages and Rust components the project needs
	@scripts/setup.sh

localstack-up: setup ## start the local AWS (LocalStack host mode + our extension) and wait until healthy
	@scripts/localstack.sh up

localstack-down: ## stop the local AWS started by localstack-up
	@scripts/localstack.sh down

localstack-logs: ## follow the local AWS log (.localstack/localstack.log)
	@scripts/localstack.sh logs

localstack-status: ## say whether the local AWS runs
	@scripts/localstack.sh status

build: ## Lambda zips for AWS (cargo lambda, release, arm64) into dist/lambda/
	@scripts/package.sh --target aws

package-local: ## Lambda zips for LocalStack (host build, debug; PROFILE=release) into dist/lambda/
	@scripts/package.sh --target local

deploy-local: localstack-up package-local ## deploy the stack to the local AWS; outputs in .localstack/stack-outputs.json
	@scripts/deploy.sh --local $(if $(STACK),--stack $(STACK)) $(if $(REGION),--region $(REGION))

deploy: build ## deploy the stack to AWS with the normal credentials (STACK=, REGION=, STAGE=)
	@scripts/deploy.sh --aws $(if $(STACK),--stack $(STACK)) $(if $(REGION),--region $(REGION))

cfn-lint: ## lint infra/template.yaml (cfn-lint, pinned, installed into .venv on first use)
	@[ -x .venv/bin/cfn-lint ] || { scripts/localstack.sh install && .venv/bin/pip install --quiet "cfn-lint==1.58.0"; }
	.venv/bin/cfn-lint infra/template.yaml

fmt: ## format the Rust code
	cargo fmt --all

# checkov pins packaging<24, which LocalStack's constraints exclude: it gets a venv of its own.
# --skip-download: no policy metadata from the vendor's API (these machines reach no such host).
checkov: ## checkov on infra/template.yaml (pinned, own venv .venv-checkov); skips live in the template
	@[ "$$(.venv-checkov/bin/checkov --version 2>/dev/null)" = "$(CHECKOV_VERSION)" ] || { python3 -m venv .venv-checkov && .venv-checkov/bin/pip install --quiet "checkov==$(CHECKOV_VERSION)"; }
	.venv-checkov/bin/checkov --quiet --compact --skip-download --framework cloudformation -f infra/template.yaml

lint-python: ## ruff, ruff format --check and mypy on infra/localstack (tools pinned in its requirements-dev.txt)
	@scripts/localstack.sh install
	@cmp -s infra/localstack/requirements-dev.txt .venv/.docket-dev-requirements || { .venv/bin/pip install --quiet -c infra/localstack/constraints.txt -r infra/localstack/requirements-dev.txt && cp infra/localstack/requirements-dev.txt .venv/.docket-dev-requirements; }
	cd infra/localstack && ../../.venv/bin/ruff check . && ../../.venv/bin/ruff format --check . && ../../.venv/bin/mypy

# The advisory database is a git repository on GitHub; where it cannot be fetched, the copy on disk
# (if any) is used and said to be stale, and without one the advisories are skipped, loudly.
# `cargo deny check bans` shows which crates pull each duplicate version.
deny: ## cargo-deny (deny.toml): licenses, bans, sources; advisories when the RustSec database is at hand
	@cargo deny --version 2>/dev/null | grep -qx 'cargo-deny $(CARGO_DENY_VERSION)' || cargo install --locked cargo-deny@$(CARGO_DENY_VERSION)
	cargo deny --locked check --hide-inclusion-graph licenses bans sources
	@if cargo deny --locked fetch db 2>/dev/null; then cargo deny --locked --offline check advisories; \
	elif ls -d $(ADVISORY_DBS)/*/crates >/dev/null 2>&1; then \
	  echo "deny: the advisory database could not be fetched; checking against the stale copy in $(ADVISORY_DBS)" >&2; \
	  cargo deny --locked --offline check advisories; \
	else echo "deny: advisories NOT checked: the RustSec advisory database could not be fetched" >&2; fi

# Not in CI (too long for it). The mutated copies build in their own target dir, never the shared
# one; --caught prints every result as it comes. Results: mutants.out/ (caught.txt, missed.txt, ...).
mutants: ## mutation testing of docket-core's rules (cargo-mutants, about an hour; MUTANTS_ARGS= for all of it)
	@cargo mutants --version 2>/dev/null | grep -qx 'cargo-mutants $(CARGO_MUTANTS_VERSION)' || cargo install --locked cargo-mutants@$(CARGO_MUTANTS_VERSION)
	CARGO_TARGET_DIR=$(HOME)/.cache/docket/mutants-target nice -n 19 \
	  cargo mutants --package docket-core --jobs 1 --timeout-multiplier 3 --caught $(MUTANTS_ARGS)

lint: setup cfn-lint checkov lint-python deny ## rustfmt --check, clippy -D warnings, cfn-lint, checkov, lint-python, deny
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --locked -- -D warnings

test-unit: setup ## unit tests (no AWS needed)
	scripts/localstack.sh install
	cd infra/localstack && ../../.venv/bin/python -m unittest discover -s tests
	cargo test --workspace --lib --bins --locked
	cargo test --workspace --test lint --locked

test-local: setup ## end-to-end tests against LocalStack (starts and stops it), the review page's in headless Chromium
	scripts/setup.sh --browser
	scripts/test-local.sh

demo: setup ## start the local AWS, deploy, run the sample documents through the pipeline, show the results
	scripts/demo.sh

test: lint test-unit test-local ## everything CI runs: lint, unit tests, LocalStack tests

bench: setup ## pipeline benchmark: per-document transitions/invocations/writes, 20 documents at once, a bulk reprocess of 1,000, the mixed-fault soak of 500
	scripts/bench.sh

bench-scale: setup ## 1,000 one-page documents dropped at once under lowered Textract quotas: failed, quota errors, completion against the quota-bound ideal, p50/p95, per-document use (BENCH_SCALE_DOCS=, see tests/benches/scale.rs)
	scripts/bench.sh scale

review: ## the review page for make demo's tenant, as reviewer `you`, at http://127.0.0.1:8080/ (PORT=, OPEN=1)
	@scripts/review.sh

screenshots: ## copy the review page's screenshots from the last browser test run (target/screenshots) into docs/screenshots for README
	@ls target/screenshots/review-*.png >/dev/null 2>&1 || { echo "no screenshots: run make test (tests/browser) first" >&2; exit 1; }
	mkdir -p docs/screenshots && cp target/screenshots/review-*.png docs/screenshots/

eval: ## extraction measured on the labelled invoices (tests/fixtures/invoices): per-field accuracy, auto-approve rate, silent errors (EVAL_ARGS=--each: per invoice)
	cargo run -p docket-eval --quiet --locked -- $(EVAL_ARGS)

eval-ocr: setup ## the labelled invoices' OCR from the local Textract, for those without one (starts and stops LocalStack)
	scripts/eval-ocr.sh $(EVAL_OCR_ARGS)

bench-local: setup ## local AWS benchmarks: Lambda cold/warm invoke, LocalStack start time, release Lambdas' zip size, init and peak RSS
	scripts/bench-local.sh
