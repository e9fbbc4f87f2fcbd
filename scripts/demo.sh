#!/usr/bin/env bash
# `make demo`: build the Aletheia dataset family end to end as a Prefect deployment run.
#
#   the sandbox image, checked or built in the background (the judge waits for it)
#   local Prefect server (SQLite under .cache/prefect, telemetry off, 127.0.0.1:$PORT)
#   -> process work pool `aletheia-local` (or $ALETHEIA_POOL) -> `prefect deploy --name '*/demo'`
#   -> a worker
#   -> `prefect deployment run build-aletheia-train/demo --watch` on configs/demo.yaml
#      (the build, publish, then the evaluation of the demo's tiny verifier: `evaluate:`)
#
# Idempotent: a second run reuses the server, the pool, the deployments and every stage
# cache (nothing is recomputed). The worker is stopped at the end, in under 3 s
# (scripts/prefect-worker.sh); the server keeps running so the UI stays browsable (stop it
# with: scripts/demo.sh --stop-server).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT="$(pwd)"
PY="$ROOT/.venv/bin/python"
PREFECT="$ROOT/.venv/bin/prefect"
PORT="${ALETHEIA_PREFECT_PORT:-4200}"
POOL="${ALETHEIA_POOL:-aletheia-local}"
CONFIG="${ALETHEIA_DEMO_CONFIG:-configs/demo.yaml}"
STATE="$ROOT/.cache/prefect"
mkdir -p "$STATE"

export PREFECT_HOME="$STATE"
export PREFECT_API_URL="http://127.0.0.1:${PORT}/api"
export PREFECT_SERVER_API_HOST="127.0.0.1"
export PREFECT_SERVER_API_PORT="$PORT"
export PREFECT_API_DATABASE_CONNECTION_URL="sqlite+aiosqlite:///${STATE}/prefect.db"
export PREFECT_SERVER_ANALYTICS_ENABLED=false
export PREFECT_CLI_COLORS=false
export DO_NOT_TRACK=1
export ALETHEIA_HOME="$ROOT"
# The demo deployments name no pool in prefect.yaml: they go to this one.
export PREFECT_DEFAULT_WORK_POOL_NAME="$POOL"
export PYTHONUNBUFFERED=1
# pip installed .venv without bytecode (--no-compile): each module's first import writes it, and
# later processes load it. An environment that sets PYTHONDONTWRITEBYTECODE would instead make
# every process (each prefect command, the server, the worker, the flow run) compile Prefect,
# torch and transformers again (measured here: importing the flow's modules 34 CPU-s cold,
# 11 with bytecode; `import prefect.cli` 7.9 vs 3.6).
unset PYTHONDONTWRITEBYTECODE

START=$(date +%s)
# Each section says how long the script has run: where a demo's minutes go, at a glance.
say() { printf '\n== %s  (+%d s)\n' "$*" "$(( $(date +%s) - START ))"; }

healthy() { "$PY" - "$PREFECT_API_URL" <<'EOF'
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1] + "/health", timeout=2) as r:
        sys.exit(0 if r.status == 200 else 1)
except Exception:
    sys.exit(1)
EOF
}

if [[ "${1:-}" == "--stop-server" ]]; then
  if [[ -f "$STATE/server.pid" ]] && kill -0 "$(cat "$STATE/server.pid")" 2>/dev/null; then
    kill -INT "$(cat "$STATE/server.pid")" && echo "stopped the Prefect server"
  else
    echo "no demo Prefect server running"
  fi
  rm -f "$STATE/server.pid"
  exit 0
fi

test -x "$PY" || { echo "no .venv: run 'make demo' (it installs everything first)" >&2; exit 1; }

say "sandbox image"
# Built (or found) in the background while Prefect starts and the flow's first stages run:
# the first judging shard waits for this build (sandbox/image.py's lock) instead of the whole
# demo waiting before Prefect starts (on a bare machine: debootstrap, then docker build).
"$PY" -m sandbox image ensure >"$STATE/image.log" 2>&1 &
IMAGE=$!
echo "checking or building it in the background (log $STATE/image.log)"

say "Prefect server on 127.0.0.1:${PORT}"
if healthy; then
  echo "reusing the server already up at ${PREFECT_API_URL}"
else
  if "$PY" -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', $PORT)) != 0)"; then
    echo "port ${PORT} is taken by something that is not a Prefect server; set ALETHEIA_PREFECT_PORT" >&2
    exit 1
  fi
  nohup "$PREFECT" server start --host 127.0.0.1 --port "$PORT" --analytics-off \
    >"$STATE/server.log" 2>&1 &
  echo $! >"$STATE/server.pid"
  for _ in $(seq 1 240); do
    healthy && break
    kill -0 "$(cat "$STATE/server.pid")" 2>/dev/null || { cat "$STATE/server.log" >&2; exit 1; }
    sleep 0.5
  done
  healthy || { echo "the Prefect server did not come up; see $STATE/server.log" >&2; exit 1; }
  echo "started (pid $(cat "$STATE/server.pid"), log $STATE/server.log)"
fi

say "work pool ${POOL}"
if "$PREFECT" work-pool inspect "$POOL" >/dev/null 2>&1; then
  echo "reusing work pool ${POOL}"
else
  "$PREFECT" work-pool create "$POOL" --type process
fi

say "deployments (prefect.yaml)"
# Registering all of them takes ~15 s: a re-run skips it while prefect.yaml, this checkout
# and the server's deployments are unchanged.
DEPLOYED_KEY="$(cat prefect.yaml scripts/demo.sh | sha256sum | cut -c1-16) ${ROOT} ${PORT}"
if [[ -f "$STATE/deployed" && "$(cat "$STATE/deployed")" == "$DEPLOYED_KEY" ]] \
  && "$PREFECT" deployment inspect build-aletheia-train/demo >/dev/null 2>&1; then
  echo "reusing the deployments (prefect.yaml unchanged since they were registered)"
else
  # the demo's deployments only: the GPU box's and the cluster's name pools of their own
  # (prefect.yaml), which this machine neither has nor should offer to run them on
  "$PREFECT" --no-prompt deploy --name '*/demo'
  echo "$DEPLOYED_KEY" >"$STATE/deployed"
fi

say "worker"
# shellcheck source=scripts/prefect-worker.sh
source scripts/prefect-worker.sh  # start_worker / stop_worker: the test times this stop
WORKER_LOG="$STATE/worker.log"
start_worker "$POOL" "demo-worker-$(hostname)" "$WORKER_LOG"
trap stop_worker EXIT
echo "worker pid ${WORKER} (log $STATE/worker.log)"

say "run build-aletheia-train/demo on ${CONFIG}"
# The flow run's own progress and fingerprint lines, from the worker's log, as they come:
# "17:23:28 [progress] judge 312/840 programs, 0/2 shards done, 5.2/s, ETA 1m41s".
# --pid: tail ends with this script (killing $FOLLOW, the pipeline's last process, left it).
tail -n +1 -F --pid=$$ "$STATE/worker.log" 2>/dev/null \
  | grep --line-buffered -E '\[progress\]|\[fingerprint\]|proven unchanged|\| (ERROR|CRITICAL) ' \
  | sed -u -E "s/^([0-9:]{8})\.[0-9]+ \| [A-Z]+ +\| (Flow|Task) run '[^']*' - /\1 /" &
FOLLOW=$!
trap 'kill "$FOLLOW" 2>/dev/null || true; stop_worker' EXIT
T0=$(date +%s)
set +e
# --watch waits for the run and exits with its state; its own state-change lines go to a
# file, so the terminal shows the flow's progress lines only.
"$PREFECT" deployment run build-aletheia-train/demo --param "config=${CONFIG}" --watch \
  --watch-interval 2 >"$STATE/run.log" 2>&1
RC=$?
set -e
sleep 1  # the last lines of the log
kill "$FOLLOW" 2>/dev/null || true
if [[ $RC -ne 0 ]]; then
  echo "" >&2
  echo "the flow run failed (exit ${RC}) after $(( $(date +%s) - T0 )) s" >&2
  if ! kill -0 "$IMAGE" 2>/dev/null && ! wait "$IMAGE"; then
    echo "the sandbox image could not be built; the end of $STATE/image.log:" >&2
    tail -n 15 "$STATE/image.log" >&2 || true
  fi
  tail -n 5 "$STATE/run.log" >&2 || true
  "$PY" -m flows.runlog first-error "$STATE/worker.log" >&2 || true
  echo "the run in the UI: http://127.0.0.1:${PORT}/runs" >&2
  exit "$RC"
fi
echo "flow run: $(( $(date +%s) - T0 )) s (set-up before it: $(( T0 - START )) s)"
wait "$IMAGE" || true  # done: the judge waited for it

say "result"
"$PY" scripts/demo_result.py "$CONFIG"
if [[ "$CONFIG" == "configs/demo.yaml" ]]; then
  # The README's demo numbers are a demo build's record (docs/demo.md): say whether this is it.
  if "$PY" scripts/readme_numbers.py check out/demo >"$STATE/readme-numbers.log" 2>&1; then
    echo "README's demo numbers:        this build's"
  else
    echo "README's demo numbers:        not this build's ($(grep -c . "$STATE/readme-numbers.log") line(s) in $STATE/readme-numbers.log);"
    echo "                              to record this build: .venv/bin/python scripts/readme_numbers.py record out/demo"
  fi
fi
echo "Prefect UI:                   http://127.0.0.1:${PORT}  (flow runs, artifacts)"
echo "the server keeps running for the UI; stop it with: bash scripts/demo.sh --stop-server"
