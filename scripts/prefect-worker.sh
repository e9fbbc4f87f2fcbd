# The demo's Prefect process worker, sourced by scripts/demo.sh (and by
# tests/flows/test_demo_worker.py, which times its stop): start_worker POOL NAME LOG, then
# stop_worker. Needs $PREFECT (the prefect command); sets $WORKER (the worker's pid).

# Seconds a worker gets to stop on SIGINT before its process group is killed. An idle worker
# stops in about a second; after a long run its SIGINT can be swallowed (it cancels the main
# asyncio task, which Prefect 3.9's worker then ignores: here one still polled 45 s later,
# where the old wait-30-s-then-SIGTERM took ~35 s). Prefect makes a second interrupt a kill;
# we kill the group at once. The run it served is over by then (its final state reported),
# so nothing of it is lost.
WORKER_STOP_GRACE_S=${WORKER_STOP_GRACE_S:-2.5}

start_worker() {
  local pool=$1 name=$2 log=$3
  # Job control on for this one job: the worker gets its own process group (stop_worker kills
  # that group), and its SIGINT is not ignored as a non-interactive shell's background jobs' is.
  set -m
  # Polling every 2 s (Prefect's default: 10) picks a run up as soon as it is scheduled.
  PREFECT_WORKER_QUERY_SECONDS=2 \
    "$PREFECT" worker start --pool "$pool" --type process --name "$name" >"$log" 2>&1 &
  WORKER=$!
  set +m
}

stop_worker() {
  [[ -n "${WORKER:-}" ]] && kill -0 "$WORKER" 2>/dev/null || return 0
  local start=$SECONDS how="on SIGINT"
  kill -INT "$WORKER" 2>/dev/null || true
  local ticks i
  ticks=$(awk -v s="$WORKER_STOP_GRACE_S" 'BEGIN { print int(s * 10) }')
  for ((i = 0; i < ticks; i++)); do
    kill -0 "$WORKER" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$WORKER" 2>/dev/null; then
    kill -KILL -- "-$WORKER" 2>/dev/null || true
    how="killed after ${WORKER_STOP_GRACE_S} s"
  fi
  { wait "$WORKER"; } 2>/dev/null || true  # (no "Killed" line from the shell)
  echo "worker stopped ($how, $((SECONDS - start)) s; log ${WORKER_LOG:-the worker log})"
  WORKER=
}
