#!/usr/bin/env bash
# The Best-of-N table on a GPU node with no Docker and no Prefect (docs/best-of-n.md): the
# fitted MBPP policy's N = 8 samples per task, judged by the process judge engine (bubblewrap
# on the node) or, with --engine http --url URL, a judge server; the tiny verifier's pick in
# list and pairwise mode beside random pick, oracle and the verifier-free baselines.
#
#   bash scripts/gpu_bon.sh WHEELS_DIR MBPP_JSONL OUT [more scripts/gpu_bon.py flags]
#
# WHEELS_DIR: the wheels of scripts/gpu-rlvr-wheels.txt (its header says how to fetch them),
# and in WHEELS_DIR/plot matplotlib's, installed only where the node has no matplotlib (the
# reports' plots); installed with --no-deps --no-index --target WHEELS_DIR/../site, first on
# PYTHONPATH, as scripts/gpu_rlvr.sh does. MBPP_JSONL: MBPP's own mbpp.jsonl. The defaults
# below fit the policy as gpu_rlvr.sh does; flags after OUT override them (argparse keeps the
# last), e.g. --policy DIR to reuse a fitted policy, --verifier DIR for a trained verifier.
# Writes OUT/table.md, OUT/summary.json, OUT/run.log and OUT/bon-<mode>/; with $OUT set in the
# environment (a lent device machine), copies the table, summary, log and each mode's report.md
# and bon_curve.png there (7 files with two modes: the device returns at most 8).
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
mkdir -p "$3"
wheels=$(realpath "$1") mbpp=$(realpath "$2") out=$(realpath "$3")
shift 3
cd "$(dirname "$0")/.."
PY="${PY:-python3}"
site="$(cd "$wheels/.." && pwd)/site"
export PYTHONPATH="$PWD:$site${PYTHONPATH:+:$PYTHONPATH}"
export ALETHEIA_CACHE_DIR="${ALETHEIA_CACHE_DIR:-$PWD/.cache}"
export TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1

"$PY" -m pip install --quiet --no-deps --no-index --upgrade --disable-pip-version-check \
  --target "$site" "$wheels"/*.whl
if ! "$PY" -c "import matplotlib" 2>/dev/null && [ -d "$wheels/plot" ]; then
  "$PY" -m pip install --quiet --no-deps --no-index --upgrade --disable-pip-version-check \
    --target "$site" "$wheels"/plot/*.whl
fi
if [ -n "${OUT:-}" ]; then  # a lent device machine: bring the small results back, even on failure
  trap 'cp -f "$out"/table.md "$out"/summary.json "$out"/run.log "$OUT"/ 2>/dev/null || true
        for d in "$out"/bon-*; do [ -d "$d" ] && mkdir -p "$OUT/$(basename "$d")" &&
          cp -f "$d"/report.md "$d"/bon_curve.png "$OUT/$(basename "$d")"/ 2>/dev/null; done; true' EXIT
fi
"$PY" scripts/gpu_bon.py --mbpp "$mbpp" --out "$out" \
  --engine process --device cuda \
  --fit-steps 3000 --hidden 128 --layers 4 --fit-batch 64 \
  --n 8 --max-tokens 48 \
  --modes list,pairwise --k 1 --max-new-tokens 32 \
  "$@" 2>&1 | tee "$out/run.log"
