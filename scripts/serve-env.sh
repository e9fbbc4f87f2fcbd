#!/usr/bin/env bash
# Build `.venv-serve`: the separate environment that runs `transformers serve`, an
# OpenAI-compatible server used to test the `openai` backend against a real process.
# It is separate because transformers[serving] wants a newer fastapi than Prefect allows.
# Idempotent: a finished environment (marker file present) is left as it is.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${SERVE_VENV:-$ROOT/.venv-serve}"
MAIN_PY="${MAIN_PY:-$ROOT/.venv/bin/python}"
MARKER="$VENV/.aletheia-serve-ready"
# One build at a time: `make test` starts one in the background and the first test that
# needs the server waits here for it instead of building a second copy over it.
exec 9>"$VENV.lock"
flock 9
if [[ -f "$MARKER" ]]; then
  echo "serve env ready: $VENV"
  exit 0
fi
# Same transformers and torch as the main environment, so both sides load the tiny model alike.
TF_VERSION="$("$MAIN_PY" -c 'import transformers; print(transformers.__version__)')"
TORCH_VERSION="$("$MAIN_PY" -c 'import torch; print(torch.__version__.split("+")[0])')"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet "torch==$TORCH_VERSION" "transformers[serving]==$TF_VERSION"
"$VENV/bin/python" -c 'import transformers, fastapi, uvicorn; print("serve env ok", transformers.__version__)'
touch "$MARKER"
