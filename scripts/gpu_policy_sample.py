"""Fit a tiny MBPP-shaped policy and sample it on a GPU node (no Docker, no Prefect needed there).

Used for the study's GPU run: the GPU machine this project is lent has no Docker engine and
no model weights, so it fits the policy on the train split's references and samples the
test split with the transformers backend on CUDA into OUT/eval/shards; `evaluate-policy`
with the same config then judges those samples on a machine with the sandbox.

    python scripts/gpu_policy_sample.py PROBLEMS.parquet OUT [--steps N --hidden H --layers L --samples K]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from pipeline.judge.stage import load_problems
from pipeline.models.config import PolicyFit
from pipeline.models.policy import examples_from_problems, fit_policy
from pipeline.policy_eval.config import PolicyEvalConfig
from pipeline.policy_eval.run import evaluate_policy


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("problems", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--max-tokens", type=int, default=64)
    a = ap.parse_args()
    train = [p for p in load_problems(a.problems).values() if p.source_split == "train"]
    spec = PolicyFit(
        name="mbpp-gpu",
        dir=a.out / "policy",
        languages=["python"],
        steps=a.steps,
        hidden_size=a.hidden,
        num_layers=a.layers,
    )
    t0 = time.perf_counter()
    model = fit_policy(spec, examples_from_problems(train, spec))
    fit_s = time.perf_counter() - t0
    cfg = PolicyEvalConfig(
        model=str(model),
        name="mbpp-gpu",
        samples=a.samples,
        k=[1, 5, 10, a.samples],
        temperature=1.0,
        max_tokens=a.max_tokens,
        progress=False,
        backend={"type": "transformers", "device": "cuda", "batch_size": 64},
    )
    result: dict = {"train_problems": len(train), "fit_s": fit_s}
    for split in (
        "test",
        "train",
    ):  # test: the study's split; train: the fitted programs, as a sanity check
        run = cfg.model_copy(update={"split": split})
        t1 = time.perf_counter()
        out = evaluate_policy(run, a.problems, a.out / f"eval-{split}", sample_only=True)
        (a.out / f"config-{split}.json").write_text(run.model_dump_json(indent=2))
        result[split] = {
            "sample_s": time.perf_counter() - t1,
            "sampled": out["sampled"],
            "generation_errors": out["stats"]["generation_errors"],
        }
    print(json.dumps(result, default=str))


if __name__ == "__main__":
    main()
