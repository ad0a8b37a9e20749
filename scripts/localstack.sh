#!/usr/bin/env bash
# Local AWS for docket: LocalStack in host mode (no Docker) with our extension (infra/localstack).
#
#   scripts/localstack.sh install   create/refresh the venv (idempotent)
#   scripts/localstack.sh up        install, start in the background, wait until healthy (no-op if running)
#   scripts/localstack.sh down      stop the process this script started (and only that one)
#   scripts/localstack.sh status    print whether it runs and where
#   scripts/localstack.sh logs      follow the log
#
# Environment: LOCALSTACK_PORT (4566), DOCKET_LOCAL_DIR (.localstack: pid, log, state),
# DOCKET_VENV (.venv), LOCALSTACK_WAIT_SECONDS (90).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
port=${LOCALSTACK_PORT:-4566}
state=${DOCKET_LOCAL_DIR:-$root/.localstack}
venv=${DOCKET_VENV:-$root/.venv}
wait_seconds=${LOCALSTACK_WAIT_SECONDS:-90}
pidfile=$state/localstack.pid
log=$state/localstack.log
ext=$root/infra/localstack
stamp=$venv/.docket-installed

say() { printf 'localstack: %s\n' "$*" >&2; }

find_python() {
  # LocalStack 2026.3 needs Python >= 3.13 (PEP 695 syntax, and `warnings.deprecated`, new in 3.13).
  local candidates=("${DOCKET_PYTHON:-}" python3.14 python3.13 python3)
  local pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
  # Newest first: pyenv installs, then system ones.
  local d
  while read -r d; do
    [ -x "$d" ] && candidates+=("$d")
  done < <(ls -d "$pyenv_root"/versions/3.1[3-9]*/bin/python3 /usr/local/bin/python3.1[3-9] \
             /usr/bin/python3.1[3-9] 2>/dev/null | sort -V -r)
  for c in "${candidates[@]}"; do
    [ -n "$c" ] || continue
    command -v "$c" >/dev/null 2>&1 || continue
    if "$c" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 13) else 1)' 2>/dev/null; then
      command -v "$c"; return 0
    fi
  done
  return 1
}

install() {
  # One installer at a time per venv: concurrent pip runs into one venv corrupt it.
  mkdir -p "$(dirname "$venv")"
  exec 9>"$venv.lock"
  flock 9
  # Reinstall only when the constraints or the extension's metadata changed.
  local want
  want=$(cat "$ext/constraints.txt" "$ext/pyproject.toml" | sha256sum | cut -c1-16)
  if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    exec 9>&-  # release; LocalStack must not inherit the lock
    return 0
  fi
  local py
  py=$(find_python) || { say "no Python >= 3.13 found (LocalStack 2026.3 needs it); install one (e.g. pyenv install 3.13) or set DOCKET_PYTHON"; exit 1; }
  # And one pip at a time on the machine: every venv's pip shares the user's pip cache, and two
  # installs at once (a clone's and CI's) have failed on its files ("OSError: [Errno 2]").
  local locks=${XDG_CACHE_HOME:-$HOME/.cache}/docket
  mkdir -p "$locks"
  exec 8>"$locks/pip.lock"
  flock -n 8 || { say "waiting for another install of LocalStack on this machine"; flock 8; }
  say "creating venv $venv with $py"
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  say "installing localstack-core[runtime]==2026.3.0 (about a minute)"
  "$venv/bin/python" -m pip install --quiet --progress-bar off -c "$ext/constraints.txt" \
    "localstack-core[runtime]==2026.3.0"
  "$venv/bin/python" -m pip install --quiet -c "$ext/constraints.txt" -e "$ext"
  echo "$want" > "$stamp"
  exec 8>&- 9>&-
}

running_pid() {
  local pid
  pid=$(cat "$pidfile" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  # Guard against a recycled pid: it must still be our LocalStack.
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q 'localstack.runtime.main' || return 1
  echo "$pid"
}

healthy() { curl -fsS -m 2 "http://127.0.0.1:$port/_localstack/health" >/dev/null 2>&1; }

up() {
  install
  mkdir -p "$state"
  if pid=$(running_pid); then
    say "already running (pid $pid) on 127.0.0.1:$port"; return 0
  fi
  if healthy; then
    say "something else already answers on 127.0.0.1:$port; not starting a second LocalStack"; exit 1
  fi
  # Local Textract runs these; without them every OCR job would fail, and every document would
  # end as unreadable (a business outcome) instead of the machine being named as the problem.
  for tool in tesseract pdftoppm; do
    command -v "$tool" >/dev/null || { say "$tool is missing: run make setup"; exit 1; }
  done
  say "starting on 127.0.0.1:$port (log: $log)"
  : > "$log"
  (
    cd "$state"
    # A temp dir of its own: LocalStack's is $TMPDIR/localstack, and a LocalStack that stops
    # clears it, under the feet of another one running beside it (tests, benches, helpers).
    mkdir -p "$state/tmp"
    export TMPDIR="$state/tmp"
    # An event source mapping polls an empty queue again within a second (LocalStack's default
    # backs off to 10 s): AWS's pollers long-poll, so a queued upload reaches ingest at once.
    # And after a batch it polls again at once (LocalStack's default waits a second): AWS runs
    # several pollers a mapping, LocalStack one, and its idle second after each batch left
    # ingest's turns under a burst unused (SCALE.md, 2026-12-06).
    export GATEWAY_LISTEN="127.0.0.1:$port" LOCALSTACK_VOLUME_DIR="$state/volume" \
      SERVICES="${LOCALSTACK_SERVICES:-s3,sqs,sns,events,iam,sts,logs,cloudwatch,cloudformation,stepfunctions,lambda,dynamodb,textract,kms}" \
      PROVIDER_OVERRIDE_DYNAMODB=docket PROVIDER_OVERRIDE_TEXTRACT=docket \
      LAMBDA_RUNTIME_EXECUTOR=docket-process LAMBDA_RETRY_BASE_DELAY="${LAMBDA_RETRY_BASE_DELAY:-10}" \
      LAMBDA_EVENT_SOURCE_MAPPING_MAX_BACKOFF_ON_EMPTY_POLL_SEC=1 LAMBDA_EVENT_SOURCE_MAPPING_POLL_INTERVAL_SEC=0 \
      EAGER_SERVICE_LOADING=1 DISABLE_EVENTS=1 SKIP_SSL_CERT_DOWNLOAD=1 DNS_ADDRESS=0 \
      LOCALSTACK_CLI=0 OMP_THREAD_LIMIT=1
    exec setsid "$venv/bin/python" -m localstack.runtime.main >>"$log" 2>&1
  ) &
  echo $! > "$pidfile"
  local waited=0
  while ! healthy; do
    # Alive is enough here: until the subshell has exec'd, its command line is still bash's
    # (running_pid's check would call a slow start on a loaded machine an exit).
    if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
      say "exited during start; last lines of $log:"; tail -n 30 "$log" >&2; exit 1
    fi
    if [ "$waited" -ge "$wait_seconds" ]; then
      say "not healthy after ${wait_seconds}s; last lines of $log:"; tail -n 30 "$log" >&2; down; exit 1
    fi
    printf '.' >&2; sleep 1; waited=$((waited + 1))
  done
  # Health answers before the runtime prints "Ready."; wait for that too (services loaded eagerly).
  while ! grep -q '^Ready\.' "$log"; do
    [ "$waited" -lt "$wait_seconds" ] || { say "no Ready. after ${wait_seconds}s"; tail -n 30 "$log" >&2; down; exit 1; }
    sleep 0.5; waited=$((waited + 1))
  done
  printf '\n' >&2; say "ready (pid $(cat "$pidfile"))"
}

# Kills processes whose environment names LocalStack process $1 as their parent (the Lambda
# executor sets DOCKET_LOCALSTACK_PID in every bootstrap it starts).
sweep() {
  local env
  for env in /proc/[0-9]*/environ; do
    if grep -qzx "DOCKET_LOCALSTACK_PID=$1" "$env" 2>/dev/null; then
      env=${env#/proc/}; kill -KILL "${env%/environ}" 2>/dev/null || true
    fi
  done
}

down() {
  local pid
  if ! pid=$(running_pid); then
    say "not running"; rm -f "$pidfile"; return 0
  fi
  say "stopping pid $pid"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "still running after 30s; killing its process group"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  # Lambda processes are started in their own sessions and die with their parent (PDEATHSIG);
  # this sweeps any left over from a crash so `down` always leaves nothing behind.
  sweep "$pid"
  rm -f "$pidfile"
  say "stopped"
}

case "${1:-}" in
  install) install ;;
  up) up ;;
  down) down ;;
  status) if pid=$(running_pid); then echo "running pid=$pid port=$port log=$log"; else echo "stopped"; exit 3; fi ;;
  logs) exec tail -n 100 -F "$log" ;;
  *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
