"""GRPO-Think on the demo's Train config, on a GPU: does the verifier's gradient go the right way?

    PYTHONPATH=.:SITE python scripts/gpu_verifier_recipe.py --data out/demo/hub OUT [--budget-s 240]
    PYTHONPATH=. python scripts/gpu_verifier_recipe.py OUT --smoke      # this CPU, the test fixture

No weights can be downloaded on the GPU machine, and a randomly initialised model never writes
a readable answer (`\\boxed{X}` after `</think>`), so every GRPO group would earn one reward and
nothing would be learned. The verifier trained here is the random verifier made readable: a
tiny line-level model (pipeline.models.policy, the RLVR policy's kind) fitted on the rows'
own Think prompts, each with every valid answer (`<think>`, `</think>`, `\\boxed{X}` for each
X), so it answers every row in the format, picking uniformly among the letters: chance
accuracy. GRPO-Think (configs/train/demo-grpo-think.yaml: the think prompt and its rewards,
accuracy, format, overlong, rank-aware) then trains it on the same rows for `--budget-s`
seconds. Memorising those rows is all it can do, and enough to show the gradient goes the right
way: its training reward and its accuracy on the rows it trains on rise from chance.

Accuracy: `--eval-samples` responses per row at the training temperature (1.0), each read by
the project's answer reader (pipeline.common.answers) against the row's gold letter, as the
accuracy reward reads them. Reported for the demo's tiny random Qwen2 (which never answers),
chance (the mean of 1 / candidates), the fitted random verifier before GRPO and after.

OUT gets summary.json, note.md, metrics.jsonl (per step: reward, each reward's mean) and the
note is printed; with $OUT set (a lent device machine) they are copied there too, also when the
run is stopped early (SIGTERM).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
THINK_ANSWER = "<think>\n</think>\n{box}"  # what the random verifier writes after the prefill


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds through `finally`: what is done is written


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--data", type=Path, help="a published folder (make demo's out/demo/hub)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/verifier-recipe"))
    ap.add_argument(
        "--rows",
        type=int,
        default=64,
        help="the first N Train rows (0: all; the demo's has 177, of 15 problems): memorising "
        "more takes more steps than the budget holds",
    )
    ap.add_argument("--device", default="auto", help="auto (cuda when there is one), cuda, cpu")
    ap.add_argument("--fit-steps", type=int, default=600)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--budget-s", type=float, default=240.0, help="GRPO's wall-time budget")
    ap.add_argument("--max-steps", type=int, default=100_000)
    ap.add_argument("--lr", type=float, default=1e-3, help="full fine-tuning's learning rate")
    ap.add_argument("--prompts-per-step", type=int, default=16)
    ap.add_argument("--num-generations", type=int, default=8)
    ap.add_argument(
        "--iterations", type=int, default=1, help="updates per batch of responses (TRL's mu)"
    )
    ap.add_argument("--eval-samples", type=int, default=16, help="responses per row")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes on this CPU (the fixture)")
    a = ap.parse_args(argv)
    if a.smoke:  # sizes for a try on this CPU
        a.rows, a.fit_steps, a.hidden, a.layers = 0, 60, 32, 2
        a.budget_s, a.max_steps, a.prompts_per_step, a.eval_samples = 60.0, 4, 2, 4
        a.device = "cpu"
    return a


def think_rows(data: Path, limit: int | None) -> list[dict[str, Any]]:
    from pipeline.common.hub_folder import read_config

    return read_config(data, "train", limit).to_pylist()


def fit_random_verifier(a: argparse.Namespace, rows: list[dict], device: str) -> Path:
    """The random verifier made readable: fitted on each row's Think prompt with every valid
    answer, so it answers in the format and picks uniformly (module docstring)."""
    from pipeline.common.answers import answer_box, valid_options
    from pipeline.common.verifier_prompt import PromptSpec, build_messages
    from pipeline.models.config import PolicyFit
    from pipeline.models.policy import Example, fit_policy

    examples = []
    for r in rows:
        messages = build_messages(
            r["query"], r["candidates"], r["candidate_languages"], PromptSpec(style="think")
        )
        user = messages[:-1]  # the fit renders the generation prompt; the answer holds <think>
        examples += [
            Example(user, THINK_ANSWER.format(box=answer_box(x)))
            for x in valid_options(r["num_candidates"])
        ]
    spec = PolicyFit(
        name="random-verifier",
        dir=a.work / "random-verifier",
        languages=["python"],
        steps=a.fit_steps,
        hidden_size=a.hidden,
        num_layers=a.layers,
        learning_rate=3e-3,
        batch_size=min(64, len(examples)),
        seed=a.seed,
        device=device,
    )
    return fit_policy(spec, examples)


def accuracy(
    model: Path, rows: list[dict], samples: int, device: str, seed: int, max_tokens: int
) -> dict[str, Any]:
    """Each row's `samples` responses at temperature 1, read as the accuracy reward reads them:
    the share right, the share with a valid answer, and top-1 (sample 0) accuracy."""
    from pipeline.common.answers import gold_letter, parse_answer
    from pipeline.common.verifier_prompt import PromptSpec, build_messages
    from pipeline.sampling.backends.base import GenerationRequest
    from pipeline.sampling.backends.factory import make_backend
    from pipeline.sampling.config import ModelSource, TransformersOptions
    from pipeline.sampling.seeds import derive_seed

    requests = [
        GenerationRequest(
            request_id=str(i),
            messages=build_messages(
                r["query"], r["candidates"], r["candidate_languages"], PromptSpec(style="think")
            ),
            n=samples,
            temperature=1.0,
            top_p=1.0,
            max_tokens=max_tokens,
            seed=derive_seed(seed, i),
        )
        for i, r in enumerate(rows)
    ]
    source = ModelSource(
        name=model.name,
        model=str(model),
        tier="weak",
        backend=TransformersOptions(device=device, decoder="generate", batch_size=4096),
    )
    right = valid = top1 = 0
    start = time.perf_counter()
    with make_backend(source) as backend:
        for result in backend.generate(requests, progress=False):
            r = rows[int(result.request_id)]
            answers = [parse_answer(g.text, r["num_candidates"]) for g in result.generations]
            gold = gold_letter(r["chosen_answer"])
            right += sum(x == gold for x in answers)
            valid += sum(x is not None for x in answers)
            top1 += answers[0] == gold
    n = len(rows) * samples
    return {
        "accuracy": right / n,
        "answered": valid / n,
        "top1_accuracy": top1 / len(rows),
        "rows": len(rows),
        "samples": samples,
        "seconds": round(time.perf_counter() - start, 1),
    }


def grpo_config(a: argparse.Namespace, model: Path, data: Path, rows: int, device: str) -> Any:
    """configs/train/demo-grpo-think.yaml (the think prompt, its rewards) on this model, these
    rows, full fine-tuning at --lr, run by the wall-time budget."""
    from pipeline.train.config import TrainConfig

    cfg = yaml.safe_load((REPO / "configs" / "train" / "demo-grpo-think.yaml").read_text())
    cfg.update(
        name="verifier-recipe-grpo-think",
        model=str(model),
        output_dir=str(a.work / "grpo-think"),
        data={"dir": str(data), "config": "train", "limit": rows},
        resume=False,
    )
    cfg["optim"] = {
        "learning_rate": a.lr,
        "max_steps": a.max_steps,
        "per_device_train_batch_size": a.prompts_per_step * a.num_generations,
        "bf16": False,  # a tiny model: fp32 costs nothing
        "use_cpu": device == "cpu",
        "save_steps": a.max_steps,
        "seed": a.seed,
        "dataloader_drop_last": False,
        "warmup_ratio": 0.0,  # in steps below: a share of --max-steps is never reached
    }
    cfg["trainer_overrides"] = {"warmup_steps": 10}
    # The random verifier's whole answer is 3 lines (tokens); a budget of 8 leaves it room.
    cfg["grpo"] |= {"num_generations": a.num_generations, "max_completion_length": 8,
                    "overlong_buffer": 2, "num_iterations": a.iterations}  # fmt: skip
    return TrainConfig.model_validate(cfg)


def tenths(values: list[float]) -> list[float]:
    parts = min(10, len(values))
    return [
        sum(values[i * len(values) // parts : (i + 1) * len(values) // parts])
        / max(1, len(values[i * len(values) // parts : (i + 1) * len(values) // parts]))
        for i in range(parts)
    ]


def note(s: dict[str, Any]) -> str:
    acc = s["accuracy"]
    curve = s.get("curve", {})

    def row(name: str, key: str) -> str:
        r = acc.get(key)
        if r is None:
            return f"| {name} | - | - | - |"
        return f"| {name} | {r['accuracy']:.3f} | {r['top1_accuracy']:.3f} | {r['answered']:.0%} |"

    lines = [
        f"# GRPO-Think on the demo's Train config ({s['rows']} rows), {s['device']}",
        "",
        (
            f"Random verifier: {s.get('fit', {}).get('parameters', '-')} parameters, fitted in "
            f"{s.get('fit', {}).get('fit_seconds', '-')} s. GRPO-Think: {s.get('steps', '-')} steps of "
            f"{s['args']['prompts_per_step']} rows x {s['args']['num_generations']} responses, full "
            f"fine-tuning at lr {s['args']['lr']}, {s.get('train_s', 0):.0f} s."
        ),
        "",
        (
            f"Accuracy on the {s['rows']} rows it trains on ({s['args']['eval_samples']} responses "
            "per row at temperature 1; chance = the mean of 1 / candidates):"
        ),
        "",
        "| verifier | accuracy | top-1 accuracy | answered |",
        "| --- | ---: | ---: | ---: |",
        row("the demo's tiny random Qwen2", "tiny_random"),
        f"| chance | {s['chance']:.3f} | {s['chance']:.3f} | 100% |",
        row("random verifier (fitted, before GRPO)", "before"),
        row("after GRPO-Think", "after"),
        "",
    ]
    if curve:
        lines += [
            "Per tenth of the run (means of the steps' values):",
            "",
            "| tenth | " + " | ".join(str(i + 1) for i in range(len(curve["reward"]))) + " |",
            "| --- |" + " ---: |" * len(curve["reward"]),
            *(
                f"| {name} | " + " | ".join(f"{v:.3f}" for v in values) + " |"
                for name, values in curve.items()
            ),
            "",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    a = parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    started = time.perf_counter()
    a.out.mkdir(parents=True, exist_ok=True)
    a.work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch

    device = a.device if a.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu":
        torch.set_num_threads(1)  # tiny models: one thread is no slower, and shares the box
    summary: dict[str, Any] = {
        "device": torch.cuda.get_device_name(0) if device.startswith("cuda") else "CPU",
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(a).items()},
        "accuracy": {},
    }
    try:
        data = a.data
        if data is None:  # the tests' schema-valid fixture: 9 rows of 3 candidates
            print("no --data: the test fixture's rows (tests/train/rowgen.py)", flush=True)
            sys.path.insert(0, str(REPO))
            from tests.train.rowgen import write_dataset

            data = write_dataset(a.work / "data")
        rows = think_rows(data, a.rows or None)
        summary["rows"] = len(rows)
        summary["chance"] = sum(1 / r["num_candidates"] for r in rows) / len(rows)

        from pipeline.models.policy import read_fit
        from pipeline.models.tiny import build_tiny_model
        from pipeline.train.metrics_log import read_metrics
        from pipeline.train.rlvr_node import imported_packages, time_budget
        from pipeline.train.run import train

        tiny = build_tiny_model(a.work / "tiny-random")
        summary["accuracy"]["tiny_random"] = accuracy(tiny, rows, a.eval_samples, device, a.seed, 8)
        t = time.perf_counter()
        model = fit_random_verifier(a, rows, device)
        summary["fit"] = read_fit(model) | {"wall_s": round(time.perf_counter() - t, 1)}
        summary["accuracy"]["before"] = accuracy(model, rows, a.eval_samples, device, a.seed, 8)
        print(json.dumps(summary["accuracy"]), flush=True)

        cfg = grpo_config(a, model, data, len(rows), device)
        (a.out / "grpo-think.json").write_text(cfg.model_dump_json(indent=2))
        t = time.perf_counter()
        result = train(cfg, callbacks=[time_budget(a.budget_s)])
        summary["train_s"] = time.perf_counter() - t
        summary["steps"] = result["global_step"]
        shutil.copy2(result["metrics_log"], a.out / "metrics.jsonl")
        steps = [r for r in read_metrics(result["metrics_log"]) if "loss" in r]
        summary["curve"] = {
            key: tenths([s.get(f"rewards/{key}/mean", s.get(key, 0.0)) for s in steps])
            for key in ("reward", "accuracy", "format")
        }
        summary["accuracy"]["after"] = accuracy(
            Path(result["model_path"]), rows, a.eval_samples, device, a.seed, 8
        )
        summary["packages"] = imported_packages()
    finally:
        summary["total_s"] = round(time.perf_counter() - started, 1)
        (a.out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
        if "rows" in summary:
            (a.out / "note.md").write_text(note(summary))
            print(note(summary), flush=True)
        if os.environ.get("OUT") and Path(os.environ["OUT"]).resolve() != a.out.resolve():
            for name in ("summary.json", "note.md", "metrics.jsonl", "grpo-think.json"):
                if (a.out / name).exists():
                    shutil.copy2(a.out / name, Path(os.environ["OUT"]) / name)


if __name__ == "__main__":
    main()
