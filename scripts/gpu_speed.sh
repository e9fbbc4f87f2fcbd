#!/usr/bin/env bash
# The evaluation and RLVR speed measurements (docs/scale.md, docs/rlvr-study.md) on a lent GPU
# machine, each stage's results copied under $OUT/<stage>/ (set by the device tool; else ./out/gpu-speed):
#
#   bash scripts/gpu_speed.sh WHEELS_DIR MBPP_JSONL HUB_DIR STAGE...
#
# STAGE: profile       scripts/gpu_eval_profile.py (where plain `generate` and the project's decoder spend their time)
#        bench         bench/bench_evaluate.py side by side at --limit 2, two rounds (evaluate() vs plain generate)
#        bench-full    the same, then both on every instance of the demo's eval configs (the targets)
#        rlvr:NAME:DIR[:FLAGS]
#                      scripts/gpu_rlvr.sh from the checkout DIR (e.g. an older commit's export, for
#                      a before/after), 60 s of GRPO at temperature 1.6, plus FLAGS (rlvr_node
#                      flags, commas for spaces: --generate-ahead,--time-limit-scale,0.05); a
#                      later rlvr stage reuses the first one's fitted policy (or $RLVR_POLICY,
#                      a fitted policy folder, from the start), so all train the same policy;
#                      its summary.json, note.md and metrics.jsonl (per-step elapsed_s: the step
#                      wall time of a checkout that does not log it) go to $OUT/NAME/, and the
#                      first fitted policy to $OUT/policy/
# WHEELS_DIR: scripts/gpu-rlvr-wheels.txt's wheels (installed first: the bench needs pydantic),
# and in WHEELS_DIR/plot matplotlib's, installed only where the machine has no matplotlib (the
# evaluation's self-consistency plots); HUB_DIR: a published demo folder (`make demo`'s
# out/demo/hub), whose evaluation configs the bench stages read.
set -uo pipefail
[ $# -ge 4 ] || { sed -n '2,14p' "$0" >&2; exit 2; }
wheels=$(realpath "$1") mbpp=$(realpath "$2") hub=$(realpath "$3")
shift 3
cd "$(dirname "$0")/.."
root="$PWD"
out="${OUT:-$root/out/gpu-speed}"
mkdir -p "$out"
# The wheels first on the path (pydantic & co. for the bench too), as gpu_rlvr.sh installs them.
site="$(cd "$wheels/.." && pwd)/site"
python3 -m pip install --quiet --no-deps --no-index --upgrade --disable-pip-version-check \
  --target "$site" "$wheels"/*.whl || exit 1
if ! python3 -c "import matplotlib" 2>/dev/null && [ -d "$wheels/plot" ]; then
  python3 -m pip install --quiet --no-deps --no-index --upgrade --disable-pip-version-check \
    --target "$site" "$wheels"/plot/*.whl || exit 1
fi
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false PYTHONPATH="$root:$site"
bench=(python3 bench/bench_evaluate.py --data "$hub" --device cuda --hidden 512 --layers 4 --k 8
  --max-new-tokens 512 --limit 2 --repeats 2)
policy="${RLVR_POLICY:+$(realpath "$RLVR_POLICY")}"
status=0
for stage in "$@"; do
  start=$(date +%s)
  case "$stage" in
    profile)
      mkdir -p "$out/profile"
      python3 scripts/gpu_eval_profile.py --out "$out/profile/eval_profile.json"
      rc=$?
      ;;
    bench)
      mkdir -p "$out/bench"
      "${bench[@]}" --out "$out/bench/bench_evaluate.json"
      rc=$?
      ;;
    bench-full)
      mkdir -p "$out/bench-full"
      "${bench[@]}" --full --out "$out/bench-full/bench_evaluate.json"
      rc=$?
      ;;
    rlvr:*:*)
      IFS=: read -r _ name dir flags <<<"$stage"
      mkdir -p "$out/$name" "/tmp/rlvr-$name/files"
      [ -n "$policy" ] && cp -r "$policy" "/tmp/rlvr-$name/policy"
      # shellcheck disable=SC2086  # FLAGS split on purpose
      (cd "$dir" && OUT="/tmp/rlvr-$name/files" PYTHONPATH="" bash scripts/gpu_rlvr.sh "$wheels" \
        "$mbpp" "/tmp/rlvr-$name" --temperature 1.6 --train-budget-s 60 ${flags//,/ })
      rc=$?
      cp -f "/tmp/rlvr-$name/files/summary.json" "/tmp/rlvr-$name/files/note.md" \
        "/tmp/rlvr-$name/files/metrics.jsonl" "$out/$name/"
      if [ -z "$policy" ] && [ -d "/tmp/rlvr-$name/policy" ]; then
        policy="/tmp/rlvr-$name/policy"
        cp -r "$policy" "$out/policy"
      fi
      ;;
    *) echo "unknown stage $stage" >&2; exit 2 ;;
  esac
  [ $rc -ne 0 ] && status=$rc
  echo "== $stage: exit $rc, $(( $(date +%s) - start )) s"
done
exit $status
