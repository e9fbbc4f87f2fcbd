"""A real OpenAI-compatible server for tests: `transformers serve` from `.venv-serve`.

The environment is built on first use by scripts/serve-env.sh (about a minute; torch
comes from the local wheel store). It is separate because transformers[serving] wants a
newer fastapi than Prefect allows.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from pipeline.sampling.backends.server import ManagedServer, free_port, transformers_serve_command

REPO = Path(__file__).resolve().parents[2]
SERVE_PYTHON = REPO / ".venv-serve" / "bin" / "python"


def ensure_serve_env() -> Path:
    subprocess.run(
        ["bash", str(REPO / "scripts" / "serve-env.sh")], check=True, capture_output=True
    )
    return SERVE_PYTHON


def start_transformers_serve(model: Path) -> ManagedServer:
    python = ensure_serve_env()
    port = free_port()
    server = ManagedServer(
        transformers_serve_command(model, python=python, port=port),
        port=port,
        env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
        health_path="/health",
        startup_timeout_s=180,
    )
    return server.start()
