"""The metrics log: one JSON line per trainer log event (`<output_dir>/metrics.jsonl`).

TRL already logs loss, rewards per function, completion lengths, KL, entropy and the
reward functions' own metrics (`log_metric`); this callback writes each event to disk
as it happens (so a crash keeps everything logged so far) and adds wall time, the
step rate, token throughput and, on a GPU, peak memory.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

METRICS_FILE = "metrics.jsonl"


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):
        return _jsonable(value.item())
    return value


class JsonlMetricsCallback(TrainerCallback):
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._start = time.perf_counter()

    def on_train_begin(self, args, state, control, **kwargs):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._start = time.perf_counter()

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs:
            return
        elapsed = time.perf_counter() - self._start
        record: dict[str, Any] = {
            "step": state.global_step,
            "epoch": state.epoch,
            "elapsed_s": elapsed,
        }
        record.update({k: _jsonable(v) for k, v in logs.items()})
        if state.global_step and elapsed > 0:
            record["steps_per_s"] = state.global_step / elapsed
            tokens = logs.get("num_tokens") or getattr(state, "num_input_tokens_seen", 0)
            if tokens:
                record["tokens_per_s"] = float(tokens) / elapsed
        peak = _peak_gpu_memory_gib()
        if peak is not None:
            record["peak_gpu_memory_gib"] = peak
        with self.path.open("a") as f:
            f.write(json.dumps(record, default=str) + "\n")


def _peak_gpu_memory_gib() -> float | None:
    import torch

    if not torch.cuda.is_available():
        return None
    return torch.cuda.max_memory_allocated() / 2**30


def read_metrics(path: str | Path) -> list[dict[str, Any]]:
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
