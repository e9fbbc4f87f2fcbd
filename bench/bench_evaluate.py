"""evaluate() side by side: today's path against the batched generate path (target: 5x+; on the
H200, the demo's evaluation configs at K=8 in under 2 minutes).

Today's path is the transformers backend's per-token loop, 8 sequences a batch (the old
EvalConfig default). The new one is the evaluation's default now: transformers' `generate`
over large batches of similar prompt length. Both run the whole `evaluate()` (prompts,
generation, scoring, report and responses files) on the same instances with the same model,
loaded once per path and timed apart from the evaluation. A short warm-up of each path runs
first, so neither pays the device's first-use costs. The headline is the ratio of the two
evaluation times, measured in this run; `--full` then times the new path alone on every
instance (the target figure), and the old path's time there is given as an estimate only.

    .venv/bin/python bench/bench_evaluate.py          # CPU: the test fixture's eval configs
    python3 bench/bench_evaluate.py --data out/demo/hub --device cuda --hidden 512 --layers 4 \\
        --k 8 --max-new-tokens 512 --limit 4 --full --out $OUT/bench_evaluate.json   # H200
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.evaluate import evaluate
from pipeline.evaluate.checkpoint import discard as discard_partial
from pipeline.evaluate.config import EvalConfig
from pipeline.evaluate.runner import open_backend
from pipeline.sampling.backends.base import Backend, GenerationRequest, GenerationResult

TARGET_S = 120.0  # the new path over every instance, model load included


class Counted(Backend):
    """Passes generation through and counts what came back (sequences, tokens, errors)."""

    def __init__(self, inner: Backend) -> None:
        self.inner, self.name = inner, inner.name
        self.sequences = self.tokens = self.errors = 0

    def generate(
        self, requests: Sequence[GenerationRequest], *, progress: bool = True
    ) -> Iterator[GenerationResult]:
        for result in self.inner.generate(requests, progress=progress):
            for g in result.generations:
                self.sequences += 1
                self.tokens += g.completion_tokens or 0
                self.errors += g.finish_reason.startswith("error")
            yield result

    def close(self) -> None:
        self.inner.close()


def _sync_and_reset_peak() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def _peak_gib() -> float | None:
    import torch

    return torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None


def run_path(
    name: str, model: Path, data: Path, work: Path, base: dict[str, Any], backend: dict[str, Any]
) -> dict[str, Any]:
    """One evaluate() with its own backend: load time, evaluation time, what was generated."""
    cfg = EvalConfig.model_validate(base | {"backend": backend})
    discard_partial(work / name)  # a crashed earlier run's generations would be reused: time all
    _sync_and_reset_peak()
    t0 = time.perf_counter()
    counted = Counted(open_backend(model, cfg))
    load_s = time.perf_counter() - t0
    try:
        t1 = time.perf_counter()
        report = evaluate(model, data, work / name, cfg, backend=counted)
        eval_s = time.perf_counter() - t1
    finally:
        counted.close()
    instances = sum(m["aletheia"]["instances"] for m in report["splits"].values())
    return {
        "path": name,
        "backend": cfg.backend.model_dump(),
        "instances": instances,
        "sequences": counted.sequences,
        "generated_tokens": counted.tokens,
        "error_generations": counted.errors,
        "load_s": load_s,
        "eval_s": eval_s,
        "total_s": load_s + eval_s,
        "sequences_per_s": counted.sequences / eval_s,
        "generated_tokens_per_s": counted.tokens / eval_s,
        "peak_gpu_memory_gib": _peak_gib(),
        "responses": report["files"]["responses"],
    }


def _keys(responses: str) -> list[tuple]:
    rows = [json.loads(x) for x in Path(responses).read_text().splitlines()]
    return sorted((r["split"], r["instance_id"], tuple(r["pair"] or ()), r["sample"]) for r in rows)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, help="published folder with the eval configs "
                   "(default: the test fixture's, written to a temporary folder)")  # fmt: skip
    p.add_argument("--model", type=Path, help="model folder (default: a random Qwen2, built)")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--device", default=None, help="cuda / cpu (default: cuda when present)")
    p.add_argument("--k", type=int, default=8)
    p.add_argument("--max-new-tokens", type=int, default=64)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--pairwise", action="store_true", help="also the round-robin pair prompts")
    p.add_argument("--limit", type=int, default=None, help="instances per split, side by side")
    p.add_argument("--full", action="store_true", help="then the new path on every instance")
    p.add_argument("--old-batch-size", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=None, help="new path (default: evaluate's)")
    p.add_argument("--max-batch-tokens", type=int, default=None)
    p.add_argument("--repeats", type=int, default=1, help="side-by-side rounds, order alternating")
    p.add_argument("--work", type=Path, help="where the evaluations write (default: temporary)")
    p.add_argument("--out", type=Path, help="the JSON file (default: <work>/bench_evaluate.json)")
    a = p.parse_args(argv)

    import torch
    import transformers

    from pipeline.models.tiny import build_tiny_model

    work = a.work or Path(tempfile.mkdtemp(prefix="bench-evaluate-"))
    data = a.data
    if data is None:
        from tests.train.rowgen import write_dataset

        data = write_dataset(work / "data")
    model = a.model or build_tiny_model(
        work / f"model-h{a.hidden}-l{a.layers}", hidden_size=a.hidden, num_layers=a.layers
    )
    device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    base = {"k": a.k, "max_new_tokens": a.max_new_tokens, "temperature": a.temperature,
            "pairwise": a.pairwise, "limit": a.limit, "progress": False}  # fmt: skip
    old = {"type": "transformers", "device": device, "decoder": "loop",
           "batch_size": a.old_batch_size}  # fmt: skip
    new = {"type": "transformers", "device": device, "decoder": "generate"}
    if a.batch_size:
        new["batch_size"] = a.batch_size
    if a.max_batch_tokens:
        new["max_batch_tokens"] = a.max_batch_tokens
    new_opts = EvalConfig(backend=new).backend.model_dump()  # the evaluation's defaults

    warm = base | {"limit": 1, "max_new_tokens": 4, "splits": ["heldout"]}
    for name, opts in (("warmup-old", old), ("warmup-new", new_opts)):
        run_path(name, model, data, work, warm, opts)

    rounds: list[dict[str, dict[str, Any]]] = []
    for r in range(a.repeats):
        order = [("old", old), ("new", new_opts)]
        order = order if r % 2 == 0 else order[::-1]  # neither always first
        got = {name: run_path(f"{name}-{r}", model, data, work, base, o) for name, o in order}
        print(json.dumps({k: {x: v[x] for x in ("eval_s", "sequences")} for k, v in got.items()}))
        rounds.append(got)
    old_s = statistics.median(x["old"]["eval_s"] for x in rounds)
    new_s = statistics.median(x["new"]["eval_s"] for x in rounds)
    same_rows = all(_keys(x["old"]["responses"]) == _keys(x["new"]["responses"]) for x in rounds)
    result: dict[str, Any] = {
        "about": "bench/bench_evaluate.py: evaluate() with today's transformers loop (8 a batch) "
        "and with the batched generate path, same instances and model, side by side in one run",
        "env": {
            "device": torch.cuda.get_device_name(0)
            if device == "cuda"
            else platform.processor() or "cpu",
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "model": str(model) if a.model else {"hidden": a.hidden, "layers": a.layers},
            "data": str(data) if a.data else "test fixture (tests/train/rowgen.py)",
            "argv": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()},
        },
        "side_by_side": {
            "rounds": rounds,
            "old_eval_s_median": old_s,
            "new_eval_s_median": new_s,
            "speedup": old_s / new_s,
            "same_response_rows": same_rows,
        },
    }
    print(
        f"side by side ({rounds[0]['old']['instances']} instances, "
        f"{rounds[0]['old']['sequences']} sequences, K={a.k}, {a.max_new_tokens} new tokens): "
        f"old {old_s:.1f}s, new {new_s:.1f}s -> {old_s / new_s:.1f}x faster; "
        f"same response rows: {same_rows}"
    )
    if a.full:
        full = run_path("new-full", model, data, work, base | {"limit": None}, new_opts)
        per_seq_old = old_s / rounds[0]["old"]["sequences"]
        result["full"] = full | {
            "target_s": TARGET_S,
            "target_met": full["total_s"] < TARGET_S,
            "old_eval_s_estimate": per_seq_old * full["sequences"],  # not measured: scaled
        }
        print(
            f"new path, every instance ({full['instances']} instances, {full['sequences']} "
            f"sequences): {full['total_s']:.1f}s with the model load (target < {TARGET_S:.0f}s: "
            f"{'met' if full['total_s'] < TARGET_S else 'NOT met'}); the old path would take "
            f"about {per_seq_old * full['sequences']:.0f}s (estimated from the side-by-side rate)"
        )
    out = a.out or work / "bench_evaluate.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"written: {out}")
    return result


if __name__ == "__main__":
    main()
