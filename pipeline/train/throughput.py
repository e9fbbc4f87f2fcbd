"""Measure GRPO / DPO / SFT throughput and peak memory on a small random model.

    python -m pipeline.train.throughput --data DIR --out DIR [--hidden 512 --layers 4 ...]

No weights can be downloaded on the GPU machines, so the model is built on the fly
(pipeline.models.tiny, randomly initialised); the trainers, data path and rewards are
the real ones. A random model emits EOS only by chance, so GRPO completions are long but
do not all run to the budget (docs/training.md gives the measured mean lengths). Results go to
`<out>/throughput.json`.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from pipeline.train.config import TrainConfig
from pipeline.train.run import train


def _peak_gib() -> float | None:
    import torch

    return torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None


def _reset_peak() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def measure(cfg: TrainConfig) -> dict[str, Any]:
    _reset_peak()
    start = time.perf_counter()
    summary = train(cfg)
    wall = time.perf_counter() - start
    last = summary["last_log"] or {}
    runtime = summary["train_runtime_s"]
    tokens = float(last.get("num_tokens") or 0.0)
    # GRPO: completion tokens generated = per step, completions x their mean length.
    from pipeline.train.metrics_log import read_metrics

    per_step = cfg.optim.per_device_train_batch_size * cfg.optim.gradient_accumulation_steps
    logged = [r for r in read_metrics(summary["metrics_log"]) if "loss" in r]
    steady = _steady_state(logged, per_step)
    generated = sum(
        r.get("completions/mean_length", 0.0) * per_step
        for r in read_metrics(summary["metrics_log"])
        if "loss" in r
    )
    return {
        "name": cfg.name,
        "method": cfg.method,
        "lora": cfg.lora is not None,
        "steps": summary["global_step"],
        "train_runtime_s": runtime,
        "wall_s_incl_load_and_save": wall,
        "steps_per_s": summary["global_step"] / runtime,
        "tokens_seen": tokens,
        "tokens_per_s": tokens / runtime if tokens else None,
        "generated_tokens_per_s": generated / runtime if generated else None,
        "peak_gpu_memory_gib": _peak_gib(),
        **steady,
        "final_loss": last.get("loss"),
        "completion_mean_length": last.get("completions/mean_length"),
    }


def measure_eval(model: Path, a: argparse.Namespace) -> dict[str, Any]:
    """Time evaluate() (K responses per instance on the four eval splits) with the transformers
    backend's default decoding (bench/bench_evaluate.py compares it with the per-token loop)."""
    from pipeline.evaluate import EvalConfig, evaluate

    # the K listwise samples only (no round-robin pair prompts): sequences = instances x K
    cfg = EvalConfig(k=a.eval_k, max_new_tokens=a.eval_tokens, temperature=1.0, pairwise=False)
    _reset_peak()
    start = time.perf_counter()
    report = evaluate(model, a.data, a.out / "eval", cfg)
    wall = time.perf_counter() - start
    sequences = sum(
        m["aletheia"]["instances"] * m["aletheia"]["k"] for m in report["splits"].values()
    )
    return {
        "name": "evaluate",
        "splits": list(report["splits"]),
        "sequences": sequences,
        "max_new_tokens": a.eval_tokens,
        "wall_s": wall,
        "sequences_per_s": sequences / wall,
        "peak_gpu_memory_gib": _peak_gib(),
    }


def _steady_state(logged: list[dict[str, Any]], per_step: int) -> dict[str, Any]:
    """Rates between the first and the last logged step: leaves out the first step's warm-up
    (CUDA context, kernel autotuning, first generation), which dominates short runs."""
    if len(logged) < 2:
        return {}
    first, last = logged[0], logged[-1]
    dt = last["elapsed_s"] - first["elapsed_s"]
    if dt <= 0:
        return {}
    out: dict[str, Any] = {
        "steady_steps_per_s": (last["step"] - first["step"]) / dt,
        "steady_tokens_per_s": (last.get("num_tokens", 0) - first.get("num_tokens", 0)) / dt,
        "first_step_s": first["elapsed_s"],
    }
    lengths = [r["completions/mean_length"] for r in logged[1:] if "completions/mean_length" in r]
    if lengths:
        out["steady_generated_tokens_per_s"] = sum(lengths) * per_step / dt
    return out


_LABELS = {
    "grpo": "GRPO-Think, full FT",
    "grpo_lora": "GRPO (GSPO ratios), LoRA r=16",
    "dpo": "DPO-Think, full FT",
    "sft": "SFT on chosen responses",
}


def _num(v: float | None, digits: int = 0) -> str:
    return "–" if v is None else f"{v:,.{digits}f}".replace(",", " ")


def markdown_table(files: list[Path]) -> str:
    """docs/training.md's table, rendered from throughput.json files (one per run, or a
    file with `runs: [...]`), so the page can be checked against the measurements."""
    runs: list[dict[str, Any]] = []
    for f in files:
        doc = json.loads(Path(f).read_text())
        runs += doc.get("runs", [doc])
    lines = [
        (
            "| run | budget | batch/step | steps | steady s/step | steady tokens/s "
            "| generated tokens/s | peak GPU memory |"
        ),
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for run in runs:
        env, argv = run["env"], run["env"].get("argv", {})
        for r in run["results"]:
            if r["name"] not in _LABELS:
                continue
            grpo = r["method"] == "grpo"
            batch = argv.get("grpo_batch" if grpo else "dpo_batch")
            rate = r.get("steady_steps_per_s")
            lines.append(
                f"| {_LABELS[r['name']]} | {env['grpo_budget'] if grpo else '–'} | {batch} "
                f"| {r['steps']} | {_num(1 / rate if rate else None, 2)} "
                f"| {_num(r.get('steady_tokens_per_s'))} "
                f"| {_num(r.get('steady_generated_tokens_per_s'))} "
                f"| {_num(r.get('peak_gpu_memory_gib'), 1)} GiB |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--table", type=Path, nargs="+", help="print the markdown table of these files")
    p.add_argument("--data", type=Path, help="dataset folder (train + dpo configs)")
    p.add_argument("--out", type=Path)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--budget", type=int, default=1024, help="GRPO max_completion_length")
    p.add_argument("--grpo-steps", type=int, default=8)
    p.add_argument(
        "--grpo-batch", type=int, default=64, help="completions per step (prompts x generations)"
    )
    p.add_argument("--dpo-steps", type=int, default=30)
    p.add_argument("--dpo-batch", type=int, default=16)
    p.add_argument("--cpu", action="store_true")
    p.add_argument("--only", nargs="*", default=["grpo", "grpo_lora", "dpo", "sft"])
    p.add_argument(
        "--eval-k", type=int, default=0, help="also time evaluate() with K samples (0: skip)"
    )
    p.add_argument("--eval-tokens", type=int, default=512)
    a = p.parse_args(argv)
    if a.table:
        print(markdown_table(a.table), end="")
        return
    if a.data is None or a.out is None:
        p.error("--data and --out are required (or --table FILE...)")

    from pipeline.models.tiny import build_tiny_model

    model = build_tiny_model(a.out / "model", hidden_size=a.hidden, num_layers=a.layers)
    optim = {
        "learning_rate": 1e-5,
        "bf16": not a.cpu,
        "use_cpu": a.cpu,
        "save_steps": 10_000,
        "logging_steps": 1,
    }
    base = {"model": str(model), "trainer_overrides": {"save_strategy": "no"}, "resume": False}
    runs = {
        "grpo": {
            "method": "grpo",
            "data": {"dir": a.data, "config": "train"},
            "optim": optim
            | {"max_steps": a.grpo_steps, "per_device_train_batch_size": a.grpo_batch},
            "grpo": {
                "num_generations": 8,
                "max_completion_length": a.budget,
                "rewards": {"accuracy": 1.0, "format": 0.5, "overlong": 1.0},
            },
        },
        "grpo_lora": {
            "method": "grpo",
            "data": {"dir": a.data, "config": "train"},
            "lora": {"r": 16, "alpha": 32},
            "optim": optim
            | {"max_steps": a.grpo_steps, "per_device_train_batch_size": a.grpo_batch},
            "grpo": {
                "sync_ref_model": False,  # TRL cannot re-sync a LoRA run's reference
                "num_generations": 8,
                "max_completion_length": a.budget,
                "importance_sampling_level": "sequence",
                "loss_type": "grpo",
                "rewards": {"accuracy": 1.0, "rank_aware": 0.5},
            },
        },
        "dpo": {
            "method": "dpo",
            "data": {"dir": a.data, "config": "dpo"},
            "optim": optim | {"max_steps": a.dpo_steps, "per_device_train_batch_size": a.dpo_batch},
            "dpo": {"max_length": 4096},
        },
        "sft": {
            "method": "sft",
            "data": {"dir": a.data, "config": "dpo"},
            "optim": optim | {"max_steps": a.dpo_steps, "per_device_train_batch_size": a.dpo_batch},
            "sft": {"max_length": 4096},
        },
    }
    results: list[dict[str, Any]] = []
    for name in a.only:
        cfg = TrainConfig.model_validate(
            base | runs[name] | {"name": name, "output_dir": a.out / name}
        )
        results.append(measure(cfg))
        print(json.dumps(results[-1]), flush=True)
        _write(a, results)  # after every run: a time limit must not lose the finished ones
    if a.eval_k:
        results.append(measure_eval(model, a))
        print(json.dumps(results[-1]), flush=True)
        _write(a, results)


def _write(a: argparse.Namespace, results: list[dict[str, Any]]) -> None:
    import torch
    import transformers
    import trl

    env = {
        "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "trl": trl.__version__,
        "model": {"hidden": a.hidden, "layers": a.layers},
        "grpo_budget": a.budget,
        "argv": vars(a) | {"data": str(a.data), "out": str(a.out)},
    }
    (a.out / "throughput.json").write_text(json.dumps({"env": env, "results": results}, indent=2))


if __name__ == "__main__":
    main()
