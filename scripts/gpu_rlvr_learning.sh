#!/usr/bin/env bash
# RLVR learning shown on one GPU, in one command of under 10 minutes: GRPO, then GSPO, each from
# the same fitted tiny MBPP policy on all MBPP train tasks with the entry point's defaults
# (scripts/gpu_rlvr.sh, pipeline.train.rlvr_node), each for TRAIN_S seconds of training;
# pass@k before and after on the train tasks (PASSK rollouts each: sharpening or new solutions)
# and on MBPP's test split (TEST rollouts per task: tasks the policy was never fitted on). GSPO
# starts from GRPO's fitted policy, temperature and before-training pass@k (--before-from).
#
#   bash scripts/gpu_rlvr_learning.sh WHEELS_DIR MBPP_JSONL OUT [more rlvr_node flags]
#   SMOKE=1 bash scripts/gpu_rlvr_learning.sh - MBPP_JSONL OUT     # this CPU, docker engine, tiny
#
# WHEELS_DIR as for gpu_rlvr.sh ("-": use this Python as it is). Each run's summary.json,
# note.md, metrics.jsonl and run.log go to OUT/grpo and OUT/gspo (and to $OUT/grpo, $OUT/gspo on
# a lent device machine, also when the time runs out); the compact table is printed at the end
# and written to OUT/table.md. Environment: TRAIN_S (training seconds per algorithm, default 160),
# ALGOS ("grpo gspo"), PASSK (32), TEST (4), LIMIT_S (570: a later run's training is cut so that
# the command ends by then), PY (the Python, default python3), FROM (an earlier run's folder,
# or its fitted.tgz unpacked: every run starts from its fitted policy, temperature and
# before-training pass@k, so a machine whose commands stop at 10 minutes can spend a whole
# command training). With $OUT set, the first run's policy/ and summary.json also go back as
# $OUT/fitted.tgz, ready to be a later command's FROM.
set -uo pipefail
[ $# -ge 3 ] || { sed -n '2,21p' "$0" >&2; exit 2; }
wheels=$1 mbpp=$(realpath "$2") out=$3
shift 3
mkdir -p "$out"
out=$(realpath "$out")
cd "$(dirname "$0")/.."
start=$(date +%s)
LIMIT_S=${LIMIT_S:-570}
TRAIN_S=${TRAIN_S:-160}
PASSK=${PASSK:-32}
TEST=${TEST:-4}
ALGOS=${ALGOS:-grpo gspo}
if [ -n "${SMOKE:-}" ]; then  # tiny sizes, the docker engine, the CPU
  TRAIN_S=${TRAIN_S_SMOKE:-40}
  flags=(--engine docker --device cpu --pool-size 2 --train-limit 6 --test-limit 6
    --fit-steps 80 --hidden 32 --layers 2 --fit-batch 16
    --probe-temperatures 1.0,1.6 --probe-problems 6 --prompts-per-step 2 --num-generations 4
    --max-completion-length 24 --steps 4)
  PASSK=8 TEST=2
else
  flags=()
fi
status=0
first=
if [ -n "${FROM:-}" ]; then
  FROM=$(realpath "$FROM")
  [ -f "$FROM/summary.json" ] && [ -d "$FROM/policy" ] || { echo "FROM=$FROM: no summary.json and policy/ there" >&2; exit 2; }
fi
for algorithm in $ALGOS; do
  elapsed=$(( $(date +%s) - start ))
  budget=$TRAIN_S
  more=()
  if [ -n "$first" ]; then  # what is left, less this run's own setup and pass@k time
    left=$(( LIMIT_S - elapsed - ${LATER_OVERHEAD_S:-70} ))
    [ "$left" -lt "$budget" ] && budget=$left
    [ "$budget" -lt 20 ] && { echo "== $algorithm: skipped, ${elapsed} s used of ${LIMIT_S} s"; break; }
    # the first run's fitted policy, temperature and before-training pass@k: the same start
    mkdir -p "$out/$algorithm" && cp -r "$out/$first/policy" "$out/$algorithm/" 2>/dev/null
    [ -f "$out/$first/summary.json" ] && more=(--before-from "$out/$first")
  fi
  mkdir -p "$out/$algorithm"
  if [ -n "${FROM:-}" ]; then  # the earlier command's fitted policy and measurements
    rm -rf "$out/$algorithm/policy" && cp -r "$FROM/policy" "$out/$algorithm/"
    more=(--before-from "$FROM")
  fi
  echo "== $algorithm: training budget ${budget} s (${elapsed} s used so far)"
  OUT_COPY="${OUT:+$OUT/$algorithm}"
  [ -n "$OUT_COPY" ] && mkdir -p "$OUT_COPY"
  OUT="$OUT_COPY" bash scripts/gpu_rlvr.sh "$wheels" "$mbpp" "$out/$algorithm" \
    --algorithm "$algorithm" --train-budget-s "$budget" \
    --passk-samples "$PASSK" --test-samples "$TEST" ${flags[@]+"${flags[@]}"} \
    ${more[@]+"${more[@]}"} "$@" >/dev/null
  rc=$?
  [ $rc -ne 0 ] && { status=$rc; echo "== $algorithm: exit $rc (see $out/$algorithm/run.log)"; tail -5 "$out/$algorithm/run.log"; }
  [ -z "$first" ] && first=$algorithm
done
# shellcheck disable=SC2086  # one folder per algorithm
python3 scripts/rlvr_learning_table.py $(printf "$out/%s " $ALGOS) | tee "$out/table.md"
[ -n "${OUT:-}" ] && cp -f "$out/table.md" "$OUT/" 2>/dev/null
if [ -n "${OUT:-}" ] && [ -n "$first" ] && [ -d "$out/$first/policy" ]; then
  tar czf "$OUT/fitted.tgz" -C "$out/$first" policy summary.json
fi
echo "== total $(( $(date +%s) - start )) s"
exit $status
