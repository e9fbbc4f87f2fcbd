"""The ablation on a GPU node with a random tiny-ish model (no weights, no Docker, no Prefect server).

    PYTHONPATH=. python scripts/gpu_ablation.py OUT [--hidden 768 --layers 6 --budget 256 \\
        --steps 3 --k 4 --eval-tokens 128] [--data DIR] [--cpu]

The GPU machines cannot download weights, so every recipe starts from one randomly initialised
Qwen2-shaped model built here (`pipeline.models.tiny`); the data is the tests' schema-valid
fixture folder (`tests/train/rowgen.py`: 9 instances of 3 candidates per config) unless `--data`
names a published folder. The AblationConfig is configs/ablation/demo.yaml with GPU settings,
and the ablation's own steps run (`pipeline.train.ablation.run_ablation`: what the
`aletheia-ablation` flow runs, without its server): GRPO-Think, GRPO-Instruct, DPO-Think and
RAFT-Think trained by the real TRL trainers, each evaluated on Heldout, Strong, Hard and Adv,
one table, one Pareto plot.

Models and checkpoints stay in `--work`; OUT gets the small files (comparison.{md,json},
pareto.png, each cell's cell.json, summary.json, metrics.jsonl, RAFT stats.json, eval
report.{json,md}) and timings.json, also when a SIGTERM (e.g. `timeout`) stops the run early.
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
KEEP = ("cell.json", "summary.json", "metrics.jsonl", "stats.json", "report.json", "report.md")


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds through `finally`: the finished cells are copied


def ablation_config(a: argparse.Namespace, model: Path, data: Path) -> dict[str, Any]:
    cfg = yaml.safe_load((REPO / "configs" / "ablation" / "demo.yaml").read_text())
    cfg.update(name="aletheia-ablation-gpu", out_dir=str(a.work / "ablation"), data_dir=str(data),
               models={"think": str(model), "instruct": str(model)})  # fmt: skip
    cfg["train"] = {
        "data": {"limit": None},
        "optim": {"max_steps": a.steps, "per_device_train_batch_size": 32,
                  "gradient_accumulation_steps": 1, "learning_rate": 1e-5, "bf16": True,
                  "use_cpu": False, "gradient_checkpointing": False, "save_steps": 10_000},
        "grpo": {"num_generations": 8, "max_completion_length": a.budget,
                 "overlong_buffer": max(1, a.budget // 4), "vllm": {"enabled": False}},
        "dpo": {"max_length": 4096},
        "raft": {"num_generations": 8, "max_length": 4096, "max_completion_length": a.budget,
                 "constrain_answer": True, "backend": {"type": "transformers", "batch_size": 128}},
    }  # fmt: skip
    # ReST-EM samples as RAFT does; STaR one response per prompt (then one hinted per miss)
    cfg["train"]["restem"] = copy.deepcopy(cfg["train"]["raft"])
    cfg["train"]["star"] = copy.deepcopy(cfg["train"]["raft"]) | {"num_generations": 1}
    rows16 = {"optim": {"per_device_train_batch_size": 16}}
    cfg["recipe_train"] = {  # GRPO: 4 prompts x 8 generations per step; DPO / RAFT: 16 rows
        "dpo-think": {"optim": {"per_device_train_batch_size": 16, "max_steps": a.steps * 4}},
        "raft-think": rows16, "star-think": rows16, "restem-think": rows16,
        # GRPO-Think's 8k and 16k cells: 2x and 4x the 4k cell's budget
        "grpo-think@8k": {"grpo": {"max_completion_length": 2 * a.budget}},
        "grpo-think@16k": {"grpo": {"max_completion_length": 4 * a.budget}},
    }  # fmt: skip
    cfg["note"] = "A random model (no weights on the GPU machine): every score is chance level."
    cfg["evaluation"] = {"k": a.k, "max_new_tokens": a.eval_tokens, "batch_size": 128,
                         "progress": False, "constrain_answer": True}  # fmt: skip
    if a.cpu:  # a smoke run of this script on a machine without a GPU
        cfg["train"]["optim"] |= {"bf16": False, "use_cpu": True}
        for method in ("raft", "restem", "star"):
            cfg["train"][method]["backend"]["device"] = "cpu"
        cfg["evaluation"]["device"] = "cpu"
    return cfg


def collect(work: Path, out: Path) -> None:
    """The small result files, in the same layout, into OUT."""
    src = work / "ablation"
    if not src.is_dir():
        return
    for path in src.rglob("*"):
        if path.is_file() and (path.name in KEEP or path.parent == src):
            if path.suffix in (".safetensors", ".bin", ".pt"):
                continue
            dest = out / "ablation" / path.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--work", type=Path, default=Path("/tmp/ablation-gpu"))
    ap.add_argument("--data", type=Path, help="a published folder (default: the test fixture)")
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--budget", type=int, default=256, help="GRPO / RAFT response tokens")
    ap.add_argument("--steps", type=int, default=3, help="GRPO and RAFT steps (DPO: 4x)")
    ap.add_argument("--k", type=int, default=4, help="evaluation responses per instance")
    ap.add_argument("--eval-tokens", type=int, default=128)
    ap.add_argument("--cpu", action="store_true", help="smoke-run this script without a GPU")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, _stop)
    start = time.perf_counter()
    a.out.mkdir(parents=True, exist_ok=True)
    a.work.mkdir(parents=True, exist_ok=True)

    import torch
    import transformers
    import trl

    from pipeline.models.tiny import build_tiny_model
    from pipeline.train.ablation import run_ablation
    from pipeline.train.ablation_config import AblationConfig

    env = {"device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
           "torch": torch.__version__, "transformers": transformers.__version__,
           "trl": trl.__version__, "argv": sys.argv[1:]}  # fmt: skip
    print(json.dumps(env), flush=True)
    timings: dict[str, Any] = {"env": env}
    try:
        model = build_tiny_model(a.work / "model", hidden_size=a.hidden, num_layers=a.layers)
        params = sum(
            p.numel() for p in transformers.AutoModelForCausalLM.from_pretrained(model).parameters()
        )
        timings["model"] = {"hidden": a.hidden, "layers": a.layers, "parameters": params}
        if a.data is None:
            sys.path.insert(0, str(REPO))
            from tests.train.rowgen import write_dataset

            data = write_dataset(a.work / "data")
        else:
            data = a.data
        cfg = AblationConfig.model_validate(ablation_config(a, model, data))
        (a.out / "ablation.yaml").write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
        timings["setup_s"] = time.perf_counter() - start
        result = run_ablation(cfg)
        timings["failed"] = result["failed"]
        timings["cells"] = {
            r["recipe"]: {"train_wall_s": r["cost"].get("wall_s"), "eval_s": r["eval_s"],
                          "steps": r["cost"].get("steps"), "tokens": r["cost"].get("tokens")}
            for r in result["rows"]
        }  # fmt: skip
        print((Path(result["files"]["comparison.md"])).read_text(), flush=True)
    finally:
        timings["total_s"] = time.perf_counter() - start
        if torch.cuda.is_available():
            timings["peak_gpu_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
        (a.out / "timings.json").write_text(json.dumps(timings, indent=2, default=str))
        collect(a.work, a.out)
        print(json.dumps({k: v for k, v in timings.items() if k != "env"}, default=str), flush=True)


if __name__ == "__main__":
    main()
