"""Aletheia's ablation at one size, as plain resumable steps (the `aletheia-ablation` flow wires them).

The recipes that separate the paper's three choices - thinking traces (GRPO-Think vs
GRPO-Instruct), learning from negatives (GRPO-Think vs RAFT-Think) and on-policy training
(GRPO-Think and RAFT vs DPO-Think) - are trained from the zoo's cells at one size
(`pipeline.train.recipes`), each checkpoint is evaluated on Heldout, Strong, Hard and Adv with
the same protocol (`pipeline.evaluate`), and one comparison table and a cost-vs-accuracy Pareto
plot are written (`pipeline.train.ablation_report`).

A cell is one recipe, in `<out_dir>/cells/<recipe>/`: `train/` (the TrainConfig's output
folder), `eval/` (report.json, report.md, responses.jsonl: the evaluation stage's folder, its
marker deciding whether it runs again) and `cell.json` (its state). A cell whose training
finished is never trained again (its settings are checked against `cell.json`: other settings
are an error, not a silent retrain); a cell that failed is redone alone on the next run,
resuming its newest checkpoint.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import yaml

from pipeline.common.hashing import canonical_json, sha256_text
from pipeline.errors import UserError
from pipeline.train.ablation_config import AblationConfig
from pipeline.train.recipes import Cell, cell_config, merge, recipe_spec

log = logging.getLogger(__name__)

CELL_FILE = "cell.json"


# -- the cells ---------------------------------------------------------------------------


def ablation_cell(cfg: AblationConfig, entry: str) -> Cell:
    """The zoo cell of a `recipes` entry (`recipe` or `recipe@budget`) at the ablation's size."""
    recipe, budget = cfg.cell(entry)
    return Cell(recipe, cfg.size, budget, False)


def train_config(cfg: AblationConfig, entry: str) -> Any:
    """The cell's TrainConfig: the zoo cell at the ablation's size, then `train`, then
    `recipe_train[recipe]`, then `recipe_train[entry]`, with the ablation's data folder and
    output folder."""
    if entry not in cfg.recipes:
        raise UserError(f"recipe {entry!r} is not in this ablation's recipes {cfg.recipes}")
    recipe, _ = cfg.cell(entry)
    spec = recipe_spec(recipe)
    overrides = merge(cfg.train, cfg.recipe_train.get(recipe, {}))
    if entry != recipe:
        overrides = merge(overrides, cfg.recipe_train.get(entry, {}))
    return cell_config(
        ablation_cell(cfg, entry),
        data_dir=cfg.data_dir,
        output_dir=cfg.cell_dir(entry) / "train",
        model=cfg.models.get(spec["family"]),
        overrides=overrides,
    )


def published_splits(data_dir: Path, config: str) -> list[str]:
    """The splits a published config folder holds: `<split>-NNNNN-of-NNNNN.parquet` files or
    `<split>/` folders of Parquet (a lone `<config>.parquet` file is one unnamed split)."""
    folder = Path(data_dir) / config
    if not folder.is_dir():
        if (Path(data_dir) / f"{config}.parquet").is_file():
            return []
        raise UserError(f"{data_dir}: no eval config {config!r} (looked for {folder}/)")
    names = {p.name.split("-", 1)[0] for p in folder.glob("*.parquet")}
    names |= {d.name for d in folder.iterdir() if d.is_dir() and any(d.glob("*.parquet"))}
    return sorted(names)


def eval_split(cfg: AblationConfig) -> str | None:
    """The split every eval config is scored on: the configured one, else `test` where a
    config has several (the listwise sets' `test` / `full`), else None (its only split)."""
    chosen: str | None = cfg.eval_split
    for config in cfg.eval_splits:
        splits = published_splits(cfg.data_dir, config)
        if cfg.eval_split is not None:
            if splits and cfg.eval_split not in splits:
                raise UserError(
                    f"eval_split {cfg.eval_split!r}: {cfg.data_dir}/{config} has {splits}"
                )
        elif len(splits) > 1:
            if "test" not in splits:
                raise UserError(
                    f"{cfg.data_dir}/{config} has splits {splits} and no `test`: set eval_split"
                )
            chosen = "test"
    return chosen


def eval_config(cfg: AblationConfig, recipe: str) -> Any:
    """The same protocol for every cell; only the prompt follows the recipe (an Instruct
    verifier is asked with the Instruct prompt, as it was trained, in the wording it was
    trained with)."""
    from pipeline.evaluate.config import EvalConfig

    tcfg = train_config(cfg, recipe)
    fields = {
        **cfg.evaluation,
        "splits": list(cfg.eval_splits),
        "style": tcfg.prompt.style,
        "prompt_template": tcfg.prompt.prompt_template,
        "system_template": tcfg.prompt.system_template,
        # the wording and box form the cell trained with (unset: ours, the rows' form)
        **{
            k: v
            for k in ("aletheia_src", "answer_format")
            if (v := getattr(tcfg.prompt, k)) is not None
        },
    }
    split = eval_split(cfg)
    if split is not None:
        if "split" not in EvalConfig.model_fields:
            raise UserError(
                f"{cfg.data_dir}: the eval configs have several splits (scoring {split!r}), but "
                "this evaluate() reads a config folder whole; update to the listwise evaluation"
            )
        fields["split"] = split
    return EvalConfig.model_validate(fields)


def _fingerprint(obj: Any) -> str:
    return sha256_text(canonical_json(obj))[:16]


METHOD_SECTIONS = ("grpo", "dpo", "sft", "raft", "rlvr", "star", "restem")


def train_fingerprint(tcfg: Any) -> str:
    """What decides a cell's training: its config without the other methods' sections (a
    RAFT setting in `train` must not make the GRPO cell look changed)."""
    fields = tcfg.model_dump(mode="json")
    return _fingerprint({k: v for k, v in fields.items()
                         if k not in METHOD_SECTIONS or k == tcfg.method})  # fmt: skip


def read_cell(cfg: AblationConfig, recipe: str) -> dict[str, Any]:
    path = cfg.cell_dir(recipe) / CELL_FILE
    return json.loads(path.read_text()) if path.exists() else {"recipe": recipe, "status": "new"}


def _write_cell(cfg: AblationConfig, recipe: str, state: dict[str, Any]) -> None:
    path = cfg.cell_dir(recipe) / CELL_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(state, indent=2, default=str) + "\n")
    tmp.replace(path)


def train_cell(cfg: AblationConfig, recipe: str) -> dict[str, Any]:
    """Train one cell, or return the summary of its finished training. A failure is recorded
    in cell.json (the next run redoes this cell alone) and raised."""
    from pipeline.train.run import train

    tcfg = train_config(cfg, recipe)
    fingerprint = train_fingerprint(tcfg)
    state = read_cell(cfg, recipe)
    if state.get("status") in ("trained", "evaluated"):
        if state["train_fingerprint"] != fingerprint:
            raise UserError(
                f"cell {recipe}: trained already with other settings ({cfg.cell_dir(recipe)}); "
                "delete that folder to train it again, or use another out_dir"
            )
        log.info("cell %s: trained already, not training again", recipe)
        return state["summary"]
    _write_cell(cfg, recipe, {"recipe": recipe, "status": "training",
                              "train_fingerprint": fingerprint})  # fmt: skip
    try:
        if cfg.launcher.type == "accelerate":
            summary = _launch(cfg, recipe, tcfg)
        else:
            summary = train(tcfg)
    except BaseException as e:
        _write_cell(cfg, recipe, {"recipe": recipe, "status": "failed", "stage": "train",
                                  "train_fingerprint": fingerprint, "error": f"{type(e).__name__}: {e}",
                                  "traceback": traceback.format_exc()})  # fmt: skip
        raise
    _write_cell(cfg, recipe, {"recipe": recipe, "status": "trained",
                              "train_fingerprint": fingerprint, "summary": summary})  # fmt: skip
    return summary


def launch_args(cfg: AblationConfig, recipe: str, config_path: Path) -> list[str]:
    """`accelerate launch ... -m aletheia train --config FILE` for one cell."""
    from pipeline.train.recipes import launch

    zoo = launch(ablation_cell(cfg, recipe))
    lc = cfg.launcher
    config_file = zoo.accelerate_config if lc.config_file is None else lc.config_file
    args = [sys.executable, "-m", "accelerate.commands.launch"]
    if config_file != "none":
        args += ["--config_file", config_file]
    args += ["--num_processes", str(lc.num_processes or zoo.num_processes), *lc.args]
    return args + ["-m", "aletheia", "train", "--config", str(config_path)]


def _launch(cfg: AblationConfig, recipe: str, tcfg: Any) -> dict[str, Any]:
    """Train the cell in its own `accelerate launch` (its log in the cell folder)."""
    folder = cfg.cell_dir(recipe)
    config_path = folder / "train_config.yaml"
    config_path.write_text(yaml.safe_dump(tcfg.model_dump(mode="json"), sort_keys=False))
    args = launch_args(cfg, recipe, config_path)
    log_path = folder / "train.log"
    log.info("cell %s: %s (log: %s)", recipe, " ".join(args), log_path)
    # The launched processes import this same checkout of the pipeline.
    root = str(Path(__file__).resolve().parents[2])
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    }
    with log_path.open("w") as out:
        done = subprocess.run(args, stdout=out, stderr=subprocess.STDOUT, env=env, check=False)
    summary = tcfg.output_dir / "summary.json"
    if done.returncode != 0 or not summary.exists():
        tail = log_path.read_text()[-2000:]
        raise RuntimeError(
            f"cell {recipe}: accelerate launch exited {done.returncode}; log tail:\n{tail}"
        )
    return json.loads(summary.read_text())


def evaluate_cell(cfg: AblationConfig, recipe: str) -> dict[str, Any]:
    """Evaluate a trained cell's checkpoint into `eval/` through the evaluation stage
    (EVALUATE): its marker there decides, so the same checkpoint, rows and settings are
    not evaluated again."""
    from pipeline.evaluate.stage import EvaluateCall, run_evaluation

    state = read_cell(cfg, recipe)
    if state.get("status") not in ("trained", "evaluated"):
        raise UserError(f"cell {recipe}: not trained yet (status {state.get('status')})")
    call = EvaluateCall.model_validate(
        eval_config(cfg, recipe).model_dump()
        | {"model": state["summary"]["model_path"], "hub_dir": cfg.data_dir}
    )
    start = time.perf_counter()
    try:
        report = run_evaluation(call, cfg.cell_dir(recipe) / "eval")
    except BaseException as e:
        _write_cell(cfg, recipe, state | {"eval_error": f"{type(e).__name__}: {e}"})
        raise
    if report["cached"] and state["status"] == "evaluated":
        log.info("cell %s: evaluated already", recipe)
        return {"report": report["files"]["json"]}
    state = {k: v for k, v in state.items() if k not in ("eval_error", "eval_fingerprint")}
    _write_cell(cfg, recipe, state | {"status": "evaluated", "report": report["files"]["json"],
                                      "eval_s": time.perf_counter() - start})  # fmt: skip
    return {"report": report["files"]["json"]}


def run_ablation(cfg: AblationConfig) -> dict[str, Any]:
    """Every cell in turn without a Prefect server (what the flow does, minus its UI): a failed
    cell does not stop the others; the comparison is written from the finished ones."""
    from pipeline.train.ablation_report import write_comparison

    failed: dict[str, str] = {}
    for recipe in cfg.recipes:
        try:
            train_cell(cfg, recipe)
            evaluate_cell(cfg, recipe)
        except Exception as e:  # noqa: BLE001 - recorded in cell.json; the other cells go on
            log.error("cell %s failed: %s", recipe, e)
            failed[recipe] = f"{type(e).__name__}: {e}"
    return write_comparison(cfg, failed)
