"""The RLVR study's training step on one machine, without Prefect or Docker: a GPU node.

    python -m pipeline.train.rlvr_node --mbpp PATH/mbpp.jsonl --out DIR --engine process

MBPP's own JSONL (read in place) -> the project's `mbpp` adapter (train split only) -> the
reference check (optional) -> a tiny line-level policy (pipeline.models.policy) fitted on the
train split's references, on the GPU when there is one -> GRPO on the same problems with
unit-test rewards judged by the chosen engine (`process` on a node without Docker, `http` to a
judge machine, `docker` where it runs) -> `DIR/summary.json` and `DIR/note.md`: per step the
generation time, the reward (judging) time, the rollout pass@1 and the share of groups with
zero reward variance (with the warning when most groups had none), plus the engine's stamp,
the device, the fit and the Python packages the run imported.

Why its rollouts earn mixed rewards: a line-level policy fitted until it reproduces its train
programs writes them (AC) at temperature 1 and, sampled hotter, splices wrong lines into some
rollouts and not others. Where that balance lies depends on the fit, so with `--temperature
auto` a probe measures it on the fitted policy before training (pipeline.train.rlvr_probe) and
training runs at the temperature with the fewest zero-variance groups; the same probe on the
trained policy gives a before/after on the same tasks (docs/rlvr-study.md: what was measured).

The import chain is kept to what a GPU node has plus a few wheels (docs/rlvr-study.md lists
them; tests/train/test_rlvr_node.py checks it): no Prefect, no docker-py unless the engine is
docker, no polars.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("rlvr_node")

SUMMARY_FILE = "summary.json"
# The RMSNorm gains of Llama-like models (the tiny policy's Granite too), by name suffix.
NORMS = ("input_layernorm", "post_attention_layernorm", "norm")
NOTE_FILE = "note.md"


@dataclass(frozen=True)
class TrlKnob:
    """A flag for one TRL field: its type and help are read from TRL's own dataclass
    (pipeline.train.trl_fields, as the training configs read them), not restated here; the
    flags and the default are the node's. Any other TRL field: `--set SECTION.FIELD=VALUE`."""

    field: str  # TRL's name (GRPOConfig's, or TrainingArguments' under it)
    section: str  # where the run's TrainConfig takes it: optim, rlvr or trainer_overrides
    flags: tuple[str, ...]
    default: Any
    note: str  # what it means for this node's tiny policy


TRL_KNOBS: tuple[TrlKnob, ...] = (
    TrlKnob("max_steps", "optim", ("--steps", "--max-steps"), 20, "optimizer steps"),
    # Full fine-tuning at 3e-4: the one setting measured to learn on all 374 MBPP train tasks
    # on a GPU (+9 points in 180 s). LoRA with the RMSNorm gains (--lora-r 16, which trains the
    # gains beside the adapters) learned fastest on 16 tasks on the CPU at 2e-3, but on all 374
    # on an H100 it rose for 40 steps and then fell 10 points below its start
    # (docs/rlvr-study.md, "Why LoRA learned nothing" and "Measured on the device").
    TrlKnob("learning_rate", "optim", ("--lr", "--learning-rate"), 3e-4, "full fine-tuning's"),
    TrlKnob("optim", "trainer_overrides", ("--optim",), "adamw_torch", "sgd, adamw_torch, ..."),
    TrlKnob("num_generations", "rlvr", ("--num-generations",), 8, "rollouts per problem"),
    TrlKnob("max_completion_length", "rlvr", ("--max-completion-length",), 48, "lines here"),
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python -m pipeline.train.rlvr_node",
        description="RLVR (GRPO) of a tiny fitted MBPP policy with unit-test rewards from a "
        "judge engine; no Prefect, no Docker needed.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    _data_args(ap.add_argument_group("data and output"))
    _judge_args(ap.add_argument_group("judge"))
    _fit_args(ap.add_argument_group("the tiny policy (pipeline.models.policy)"))
    rl = ap.add_argument_group("RLVR (TRL GRPO)")
    for knob in TRL_KNOBS:
        _add_trl_knob(rl, knob)
    _rl_args(rl)
    _passk_args(ap.add_argument_group("pass@k before and after (sharpening or new solutions)"))
    _run_args(rl)
    return ap.parse_args(argv)


def _add_trl_knob(group: Any, knob: TrlKnob) -> None:
    from pipeline.train.trl_fields import coerce, trl_fields

    field = trl_fields("GRPOConfig")[knob.field]

    def value(text: str) -> Any:
        try:
            return coerce(field, text, "")
        except ValueError as exc:  # ".learning_rate: 'x' is not float (...)": argparse names it
            raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[-1]) from None

    value.__name__ = field.annotation  # argparse names the type in its error
    where = f"TRL {field.owner}.{field.name}, whose default is {field.default}"
    text = f"{knob.note}: {field.help} [{where}]".replace("%", "%%")
    group.add_argument(*knob.flags, dest=knob.field, type=value, default=knob.default, help=text)


def _data_args(io: Any) -> None:
    io.add_argument(
        "--mbpp", type=Path, required=True, help="MBPP's own mbpp.jsonl (read in place)"
    )
    io.add_argument("--out", type=Path, required=True, help="output folder")
    io.add_argument("--train-limit", type=int, default=None, help="first N train tasks (by id)")
    io.add_argument(
        "--no-check-references",
        dest="check_references",
        action="store_false",
        help="skip running the references (the check quarantines tasks whose reference fails)",
    )


def _judge_args(judge: Any) -> None:
    from sandbox.engines import ENGINES

    judge.add_argument("--engine", default="process", choices=ENGINES)
    judge.add_argument("--pool-size", type=int, default=None, help="programs at once (None: CPUs)")
    judge.add_argument("--url", default=None, help="http engine: the judge server")
    judge.add_argument("--batch-timeout", type=float, default=300.0, help="one reward batch, s")
    judge.add_argument(
        "--time-limit-scale",
        type=float,
        default=0.2,
        help="rewards judge at this share of each task's time limit (MBPP's 10 s per assert "
        "only guards against hangs; a looping rollout would hold a judge slot that long); the "
        "reference check runs at the same share",
    )


def _fit_args(fit: Any) -> None:
    fit.add_argument("--device", default="auto", help="auto (cuda when there is one), cuda, cpu")
    fit.add_argument("--fit-steps", type=int, default=300)
    fit.add_argument("--hidden", type=int, default=128)
    fit.add_argument("--layers", type=int, default=4)
    fit.add_argument("--fit-lr", type=float, default=3e-3)
    fit.add_argument("--fit-batch", type=int, default=32)
    fit.add_argument("--seed", type=int, default=0)


def _rl_args(rl: Any) -> None:
    """The node's own RL settings (TRL's fields are the `TRL_KNOBS` and `--set`)."""
    rl.add_argument("--prompts-per-step", type=int, default=8, help="problems per step")
    rl.add_argument(
        "--temperature",
        type=_temperature,
        default="auto",
        help="rollout temperature, or auto: probe --probe-temperatures first and take the one "
        "with the fewest zero-variance groups (pipeline.train.rlvr_probe)",
    )
    rl.add_argument("--probe-temperatures", type=_floats, default=[0.7, 1.0, 1.3, 1.6, 2.0, 2.5])
    rl.add_argument("--probe-problems", type=int, default=32, help="problems sampled per probe")
    rl.add_argument(
        "--warmup",
        type=float,
        default=10,
        help="warm-up: below 1 a share of --steps, else a number of steps (a run stopped by "
        "--train-budget-s never reaches a share of a large --steps)",
    )
    rl.add_argument(
        "--lora-r", type=int, default=0, help="LoRA rank (all linear layers); 0 = full fine-tuning"
    )
    rl.add_argument(
        "--lora-norms",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with --lora-r: train the RMSNorm gains in full beside the adapters (lora."
        "modules_to_save; the adapters alone cannot scale the logits)",
    )
    rl.add_argument("--algorithm", default="grpo", choices=("grpo", "gspo"))
    rl.add_argument(
        "--reward",
        default="unit_test",
        choices=("unit_test", "combined", "ruff"),
        help="the study's reward formulations (pipeline.train.config.PAPER_REWARDS)",
    )
    rl.add_argument("--zero-variance-warn", type=float, default=0.5, help="warn above this share")
    rl.add_argument(
        "--generate-ahead",
        action="store_true",
        help="write the next step's rollouts while this step's are judged (rlvr.generate_ahead: "
        "the judging hides behind generation, the update is one step off-policy)",
    )
    rl.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other key of the run's training config over the node's, as `aletheia train "
        "--set`: a TRL field by TRL's name, e.g. optim.weight_decay=0.01 or rlvr.beta=0.04",
    )


def _passk_args(ev: Any) -> None:
    ev.add_argument(
        "--passk-samples",
        type=int,
        default=0,
        help="rollouts per train task, before and after training, at the training temperature, "
        "for pass@k at k = 1, 2, 4, ... up to this (0: not measured)",
    )
    ev.add_argument(
        "--passk-problems", type=int, default=None, help="train tasks for pass@k (None: all)"
    )
    ev.add_argument(
        "--test-limit", type=int, default=None, help="the first N test tasks (None: all 500)"
    )
    ev.add_argument(
        "--test-samples",
        type=int,
        default=0,
        help="the same on MBPP's test split (500 tasks the policy was not fitted on), this many "
        "rollouts per task (0: not measured)",
    )


def _run_args(rl: Any) -> None:
    rl.add_argument(
        "--before-from",
        type=Path,
        default=None,
        help="an earlier run's OUT of the same fitted policy and settings (e.g. the GRPO run "
        "beside a GSPO one): its temperature probe and before-training pass@k are taken, not "
        "measured again",
    )
    rl.add_argument(
        "--train-budget-s",
        type=float,
        default=None,
        help="stop training after the step that passes this many seconds (a lent GPU's budget)",
    )


def _temperature(text: str) -> float | str:
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a number or auto") from None


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: comma-separated numbers") from None


def resolve_device(name: str) -> str:
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit(f"--device {name}: torch {torch.__version__} sees no CUDA device here")
    return name


def device_info(device: str) -> dict[str, Any]:
    import torch

    info: dict[str, Any] = {
        "device": device,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cuda_available": torch.cuda.is_available(),
    }
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        info |= {
            "gpu": props.name,
            "gpu_memory_gib": round(props.total_memory / 2**30, 1),
            "gpu_count": torch.cuda.device_count(),
        }
    return info


def imported_packages() -> dict[str, str]:
    """The installed distributions this process imported modules from (name -> version): what
    a node needs. Read from each module's file, so a namespace package (google.*) names only
    the distribution that really supplied the module. This project is left out: the node runs it
    from the checkout, and an editable install's `*.egg-info` there would otherwise name it."""
    from importlib.metadata import distributions

    owner: dict[str, tuple[str, str]] = {}
    for dist in distributions():
        if dist.metadata["Name"] == "aletheia-pipeline":
            continue
        for f in dist.files or ():
            if f.suffix in (".py", ".so"):  # no resolve(): a path as the import system saw it
                owner[os.path.normpath(str(dist.locate_file(f)))] = (
                    dist.metadata["Name"],
                    dist.version,
                )
    found: dict[str, str] = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and (hit := owner.get(os.path.normpath(path))):
            found[hit[0]] = hit[1]
    return dict(sorted(found.items(), key=lambda kv: kv[0].lower()))


def train_problems(args: argparse.Namespace, work: Path, engine: Any) -> tuple[Path, dict]:
    """Ingest MBPP's train split, keep the first N tasks, check their references; returns the
    problems Parquet RLVR trains on and what happened to the tasks."""
    from pipeline.common.parquet import write_parquet
    from pipeline.judge.stage import load_problems
    from pipeline.problems.config import IngestConfig
    from pipeline.problems.stage import ingest
    from schemas.problem import PROBLEM_SCHEMA
    from schemas.tables import models_to_table

    ingested = work / "problems.parquet"
    stats = ingest([f"mbpp:{args.mbpp}#train"], ingested, IngestConfig(), show_progress=False)
    problems = sorted(
        load_problems(ingested).values(),
        key=lambda p: (int(p.source_id) if p.source_id.isdigit() else 1 << 62, p.problem_id),
    )
    chosen = problems[: args.train_limit] if args.train_limit else problems
    path = work / "train.parquet"
    write_parquet(models_to_table(chosen, PROBLEM_SCHEMA), path, PROBLEM_SCHEMA)
    report: dict[str, Any] = {
        "ingested": len(problems),
        "ingest_quarantined": stats.get("quarantined"),
        "chosen": len(chosen),
    }
    if not args.check_references:
        return path, report
    from pipeline.problems.reference_check import check_references

    # At the rewards' own time limits: a task whose reference does not fit them is quarantined
    # here, rather than teaching the policy that its correct program is wrong.
    checked = check_references(
        path,
        work / "references",
        client=engine,
        time_limit_scale=args.time_limit_scale,
        progress=False,
    )
    report["reference_check"] = {
        k: checked[k]
        for k in (
            "with_reference",
            "reference_pass",
            "reference_pass_rate",
            "verdicts",
            "quarantined",
        )
    }
    return work / "references" / "train.verified.parquet", report


def fit(args: argparse.Namespace, problems: list, device: str, out: Path) -> tuple[Path, dict]:
    from pipeline.models.config import PolicyFit
    from pipeline.models.policy import examples_from_problems, fit_policy, read_fit

    spec = PolicyFit(
        name="mbpp-rlvr-node",
        dir=out / "policy",
        languages=["python"],
        steps=args.fit_steps,
        hidden_size=args.hidden,
        num_layers=args.layers,
        learning_rate=args.fit_lr,
        batch_size=args.fit_batch,
        seed=args.seed,
        device=device,
    )
    path = fit_policy(spec, examples_from_problems(problems, spec))
    return path, read_fit(path)


def train_config(args: argparse.Namespace, model: Path, data_dir: Path, device: str) -> Any:
    from pipeline.train.config import PAPER_REWARDS, TrainConfig
    from pipeline.train.recipes import merge, parse_sets

    sandbox: dict[str, Any] = {
        "engine": args.engine,
        "pool_size": args.pool_size or os.cpu_count() or 1,
        "batch_timeout_s": args.batch_timeout,
        "time_limit_scale": args.time_limit_scale,
    }
    if args.url:
        sandbox["url"] = args.url
    lora = {
        "r": args.lora_r,
        "alpha": 2 * args.lora_r,
        "modules_to_save": list(NORMS) if args.lora_norms else None,
    }
    raw: dict[str, Any] = {
        "name": f"rlvr-node-{args.reward}-{args.algorithm}",
        "method": "rlvr",
        "model": str(model),
        "output_dir": args.out / "train",
        "data": {"dir": data_dir, "config": "train_questions"},
        "lora": lora if args.lora_r else None,
        "optim": {
            "per_device_train_batch_size": args.prompts_per_step * args.num_generations,
            # A warm-up: Adam's first steps move every weight by about the full learning
            # rate at once, which a fitted tiny policy does not survive at 1e-3 (measured).
            "lr_scheduler_type": "constant_with_warmup",
            "warmup_ratio": args.warmup if args.warmup < 1 else 0.0,
            "bf16": False,  # a tiny model: fp32 costs nothing and keeps the fit's numerics
            "use_cpu": device == "cpu",
            "save_steps": max(args.max_steps, 1),
            "seed": args.seed,
        },
        "rlvr": {
            "algorithm": args.algorithm,
            "temperature": 1.0 if args.temperature == "auto" else args.temperature,
            "rewards": PAPER_REWARDS[args.reward],
            "sandbox": sandbox,
            "zero_variance_warn_share": args.zero_variance_warn,
            "generate_ahead": args.generate_ahead,
        },
        "resume": False,  # a measurement: every run starts from the fitted policy
        "trainer_overrides": {"warmup_steps": int(args.warmup)} if args.warmup >= 1 else {},
    }
    for knob in TRL_KNOBS:
        raw[knob.section][knob.field] = getattr(args, knob.field)
    return TrainConfig.model_validate(merge(raw, parse_sets(args.sets)))


def time_budget(seconds: float) -> Any:
    """A TrainerCallback that ends training after the step that passes `seconds`."""
    from transformers import TrainerCallback

    class TimeBudget(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            self.start = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            if time.perf_counter() - self.start > seconds:
                log.info(
                    "training stops at step %d: --train-budget-s %s", state.global_step, seconds
                )
                control.should_training_stop = True

    return TimeBudget()


def question_rows_of(cfg: Any) -> list[dict]:
    """The RLVR rows the run trains on (its Train-Questions table)."""
    from pipeline.common.hub_folder import read_config
    from pipeline.train.rlvr import question_rows

    return question_rows(read_config(cfg.data.dir, cfg.data.config), cfg.rlvr.language).to_list()


def probe_table(
    args: argparse.Namespace,
    cfg: Any,
    engine: Any,
    device: str,
    model: str,
    temperatures: list[float],
) -> list[dict]:
    """Rollout pass@1 and zero-variance groups of `model` per temperature, on the same
    `--probe-problems` train tasks and seed every time (so before and after compare)."""
    from pipeline.train.code_rewards import SandboxRewardScorer
    from pipeline.train.rlvr_probe import probe_temperatures

    rows = question_rows_of(cfg)
    table = probe_temperatures(
        model,
        rows,
        temperatures,
        SandboxRewardScorer(engine, cfg.rlvr),
        num_generations=cfg.rlvr.num_generations,
        max_new_tokens=cfg.rlvr.max_completion_length,
        problems=args.probe_problems,
        device=device,
        seed=args.seed,
    )
    if device.startswith("cuda"):  # the probe's copy of the policy leaves the GPU to training
        import torch

        torch.cuda.empty_cache()
    return table


def split_rows(args: argparse.Namespace, work: Path, split: str) -> list[dict]:
    """MBPP's `split` tasks as RLVR rows (the policy's prompt and the judge columns), for
    evaluation only: no reference check."""
    from pipeline.common.hub_folder import read_config
    from pipeline.judge.stage import load_problems
    from pipeline.problems.config import IngestConfig
    from pipeline.problems.stage import ingest
    from pipeline.train.questions import write_train_questions
    from pipeline.train.rlvr import question_rows

    path = work / f"{split}-problems.parquet"
    ingest([f"mbpp:{args.mbpp}#{split}"], path, IngestConfig(), show_progress=False)
    problems = sorted(
        load_problems(path).values(),
        key=lambda p: (int(p.source_id) if p.source_id.isdigit() else 1 << 62, p.problem_id),
    )
    if split == "test" and args.test_limit:
        problems = problems[: args.test_limit]
    data = write_train_questions(problems, work / f"{split}-data")
    return question_rows(read_config(data, "train_questions"), "python").to_list()


def passk_tables(
    args: argparse.Namespace,
    cfg: Any,
    engine: Any,
    device: str,
    model: str,
    rows: dict[str, list[dict]],
) -> dict[str, dict]:
    """pass@k of `model` per split (`rows`: split -> its RLVR rows) at the training temperature:
    --passk-samples rollouts per train task, --test-samples per test task."""
    from pipeline.train.code_rewards import SandboxRewardScorer
    from pipeline.train.rlvr_probe import pass_at_k_table

    out = {}
    for split, split_rows_ in rows.items():
        train = split == "train"
        out[split] = pass_at_k_table(
            model,
            split_rows_,
            SandboxRewardScorer(engine, cfg.rlvr),
            temperature=cfg.rlvr.temperature,
            samples=args.passk_samples if train else args.test_samples,
            max_new_tokens=cfg.rlvr.max_completion_length,
            device=device,
            problems=args.passk_problems if train else None,
            seed=args.seed,
        )
        log.info("pass@k %s (%s): %s", split, model, out[split]["pass_at_k"])
    if device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()
    return out


def earlier_run(args: argparse.Namespace, fit_record: dict[str, Any]) -> dict[str, Any]:
    """The summary of `--before-from`, checked to be of the same fitted policy and the same
    before-training measurements."""
    path = args.before_from / SUMMARY_FILE
    if not path.is_file():
        raise SystemExit(f"--before-from {args.before_from}: no {SUMMARY_FILE} there")
    earlier = json.loads(path.read_text())
    r = earlier["rlvr"]
    splits = {"train": args.passk_samples, "test": args.test_samples}
    wrong = [
        name
        for name, same in (
            ("the fitted policy", earlier["fit"]["key"] == fit_record["key"]),
            ("--num-generations", r["settings"]["num_generations"] == args.num_generations),
            ("--probe-problems", r["before"]["problems"] <= args.probe_problems),
            (
                "--passk-samples / --test-samples",
                {k: v["before"]["samples"] for k, v in r["passk"].items()}
                == {k: n for k, n in splits.items() if n},
            ),
        )
        if not same
    ]
    if wrong:
        raise SystemExit(f"--before-from {args.before_from}: differs in {', '.join(wrong)}")
    return earlier


@dataclass
class Before:
    """What the run measured (or took from `--before-from`) before training."""

    cfg: Any  # the training config, at the chosen rollout temperature
    probe: list[dict]  # the temperature probe's rows
    auto: bool  # the temperature was chosen by the probe
    passk_rows: dict[str, list[dict]]  # split -> the RLVR rows pass@k is measured on
    passk: dict[str, dict]  # split -> pass@k before training


def run(args: argparse.Namespace) -> dict[str, Any]:
    from pipeline.judge.config import SandboxSection
    from pipeline.judge.interface import open_judge
    from pipeline.train.rlvr_report import markdown_table

    started = time.perf_counter()
    if not args.mbpp.is_file():
        raise SystemExit(f"--mbpp {args.mbpp}: no such file (MBPP's own mbpp.jsonl)")
    device = resolve_device(args.device)
    (args.out / "work").mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    section: dict[str, Any] = {"engine": args.engine, "pool_size": args.pool_size}
    if args.url:
        section["url"] = args.url
    t = time.perf_counter()
    engine = open_judge(SandboxSection.model_validate(section))
    timings["engine_start_s"] = time.perf_counter() - t
    try:
        done = _train_and_measure(args, engine, device, timings)
        stamp = engine.stamp
        # The engine's own account where it gives one (process: cgroups, seccomp, versions).
        described = engine.describe() if callable(getattr(engine, "describe", None)) else None
    finally:
        engine.close()
    timings["total_s"] = time.perf_counter() - started
    engine_record = {
        "name": args.engine,
        "stamp": stamp,
        "pool_size": args.pool_size,  # None: the engine's default (the CPU count)
        "describe": described,
    }
    summary = _summary(args, device, engine_record, timings, **done)
    (args.out / SUMMARY_FILE).write_text(json.dumps(summary, indent=2, default=str) + "\n")
    steps_table = markdown_table(summary["rlvr"]["steps"])
    (args.out / NOTE_FILE).write_text(closing_note(summary, steps_table))
    return summary


def _train_and_measure(
    args: argparse.Namespace, engine: Any, device: str, timings: dict[str, float]
) -> dict[str, Any]:
    """The problems, the fit, the measurements before, training, the measurements after."""
    from pipeline.judge.stage import load_problems
    from pipeline.train.questions import write_train_questions
    from pipeline.train.run import train

    work = args.out / "work"
    t = time.perf_counter()
    problems_path, data_report = train_problems(args, work, engine)
    timings["prepare_s"] = time.perf_counter() - t
    problems = sorted(load_problems(problems_path).values(), key=lambda p: p.problem_id)
    if not problems:
        raise SystemExit(f"{args.mbpp}: no train task left to train on ({data_report})")
    data_dir = write_train_questions(problems, work / "data")
    t = time.perf_counter()
    model, fit_record = fit(args, problems, device, args.out)
    timings["fit_s"] = time.perf_counter() - t
    cfg = train_config(args, model, data_dir, device)
    before = _before_training(args, cfg, engine, device, str(model), fit_record, timings)
    cfg, chosen = before.cfg, before.cfg.rlvr.temperature
    t = time.perf_counter()
    budget = [time_budget(args.train_budget_s)] if args.train_budget_s else []
    result = train(cfg, sandbox_client=engine, callbacks=budget)
    timings["train_s"] = time.perf_counter() - t
    t = time.perf_counter()
    trained = result["model_path"]
    passk_after = passk_tables(args, cfg, engine, device, trained, before.passk_rows)
    timings["passk_after_s"] = time.perf_counter() - t
    # The trained policy on the probe's problems at the training temperature: before/after
    # on the same tasks (the per-step pass@1 is over each step's own tasks).
    t = time.perf_counter()
    [after] = probe_table(args, cfg, engine, device, trained, [chosen])
    timings["probe_after_s"] = time.perf_counter() - t
    [probed] = [row for row in before.probe if row["temperature"] == chosen]
    return {
        "problems": len(problems), "data_report": data_report, "fit_record": fit_record,
        "cfg": cfg, "before": before, "result": result, "probed": (probed, after),
        "passk_after": passk_after,
    }  # fmt: skip


def _before_training(
    args: argparse.Namespace,
    cfg: Any,
    engine: Any,
    device: str,
    model: str,
    fit_record: dict[str, Any],
    timings: dict[str, float],
) -> Before:
    """The rollout temperature (the probe's pick, or --temperature) and pass@k before training;
    both taken from `--before-from`'s run when given."""
    from pipeline.train.rlvr_probe import pick_temperature

    auto = args.temperature == "auto"
    earlier = earlier_run(args, fit_record) if args.before_from else None
    t = time.perf_counter()
    if earlier is not None:
        probe = earlier["rlvr"]["temperature_probe"]
        auto = earlier["rlvr"]["temperature_chosen_by"] == "probe"
        chosen = earlier["rlvr"]["settings"]["temperature"]
    else:
        temperatures = args.probe_temperatures if auto else [args.temperature]
        probe = probe_table(args, cfg, engine, device, model, temperatures)
        chosen = pick_temperature(probe) if auto else args.temperature
    timings["probe_s"] = time.perf_counter() - t
    log.info("rollout temperature %s (probe: %s)", chosen, probe)
    cfg = cfg.model_copy(update={"rlvr": cfg.rlvr.model_copy(update={"temperature": chosen})})
    t = time.perf_counter()
    passk_rows: dict[str, list[dict]] = {}
    if args.passk_samples:
        passk_rows["train"] = question_rows_of(cfg)
    if args.test_samples:
        passk_rows["test"] = split_rows(args, args.out / "work", "test")
    if earlier is not None:
        passk = {k: v["before"] for k, v in earlier["rlvr"]["passk"].items()}
    else:
        passk = passk_tables(args, cfg, engine, device, model, passk_rows)
    timings["passk_before_s"] = time.perf_counter() - t
    return Before(cfg, probe, auto, passk_rows, passk)


def _summary(
    args: argparse.Namespace,
    device: str,
    engine: dict[str, Any],
    timings: dict[str, float],
    *,
    problems: int,
    data_report: dict[str, Any],
    fit_record: dict[str, Any],
    cfg: Any,
    before: Before,
    result: dict[str, Any],
    probed: tuple[dict, dict],
    passk_after: dict[str, dict],
) -> dict[str, Any]:
    """summary.json: the engine, device, data, fit, the RLVR run and its measurements."""
    rlvr = result["rlvr"]
    return {
        "engine": engine,
        "device": device_info(device),
        "data": {"mbpp": str(args.mbpp), "train_problems": problems, **data_report},
        "fit": fit_record,
        "rlvr": {
            "settings": cfg.rlvr.model_dump(mode="json", exclude={"vllm"}),
            "learning_rate": args.learning_rate,
            "lora_r": args.lora_r or None,
            "steps_run": result["global_step"],
            "temperature_chosen_by": "probe" if before.auto else "--temperature",
            "temperature_probe": before.probe,
            "before": probed[0],
            "after": probed[1],
            "passk": {
                split: {"before": before.passk[split], "after": passk_after[split]}
                for split in before.passk
            },
            **rlvr,
        },
        "timings": timings,
        "model_path": result["model_path"],
        "metrics_log": result["metrics_log"],
        "packages": imported_packages(),
        "argv": sys.argv[1:],
    }


def closing_note(summary: dict[str, Any], table: str) -> str:
    r, m, t = summary["rlvr"], summary["rlvr"]["mean"], summary["timings"]
    dev = summary["device"]
    where = dev.get("gpu") or f"{dev['cpus']} CPUs"

    def fmt(v: Any, spec: str) -> str:
        return "-" if v is None else format(v, spec)

    lines = [
        f"# RLVR on MBPP train ({summary['data']['train_problems']} tasks), {where}",
        "",
        (
            f"Judge: `{summary['engine']['stamp']}`. Policy: {summary['fit']['parameters']:,} "
            f"parameters, fitted in {summary['fit']['fit_seconds']:.1f} s"
            f"{' (reused)' if t['fit_s'] < summary['fit']['fit_seconds'] / 2 else ''}. "
            f"{r['steps_run']} {r['settings']['algorithm'].upper()} steps of "
            f"{r['settings']['num_generations']} rollouts per problem at temperature "
            f"{r['settings']['temperature']} in {t['train_s']:.1f} s."
        ),
        "",
        (
            f"Per step (mean): {fmt(m['step_time_s'], '.2f')} s, of which generation "
            f"{fmt(m['generation_time_s'], '.2f')} s; reward {fmt(m['reward_time_s'], '.2f')} s "
            f"(judging {fmt(m['judge_time_s'], '.2f')} s, {fmt(m['judge_unique'], '.0%')} of "
            f"programs distinct, {fmt(m['judge_cached'], '.0%')} of those from the verdict "
            f"cache), of which the step waited {fmt(m['reward_wait_s'], '.2f')} s "
            f"({fmt(m['reward_share'], '.0%')} of the step's wall time), "
            f"rollout pass@1 {fmt(m['pass_at_1'], '.3f')}, zero-variance groups "
            f"{fmt(m['zero_variance_groups'], '.0%')}."
        ),
        "",
        table,
        "",
        (
            "Rollout pass@1 by tenths of the run: "
            + " → ".join(fmt(v, ".3f") for v in by_tenths([s["pass_at_1"] for s in r["steps"]]))
            + "."
        ),
        "",
        (
            f"Before and after, on the same {r['before']['problems']} train tasks x "
            f"{r['settings']['num_generations']} rollouts at temperature "
            f"{r['settings']['temperature']}: rollout pass@1 {fmt(r['before']['pass_at_1'], '.3f')}"
            f" -> {fmt(r['after']['pass_at_1'], '.3f')}, zero-variance groups "
            f"{fmt(r['before']['zero_variance_groups'], '.0%')} -> "
            f"{fmt(r['after']['zero_variance_groups'], '.0%')}."
        ),
        "",
    ]
    if r["passk"]:
        lines += [*passk_note(r["passk"], fmt), ""]
    if r["temperature_chosen_by"] == "probe":
        lines += [
            (
                f"Rollout temperature {r['settings']['temperature']}, chosen by the probe (the "
                f"fitted policy on {r['before']['problems']} train tasks before training; the "
                "fewest zero-variance groups):"
            ),
            "",
            "| temperature | rollout pass@1 | zero-variance groups | generation s | reward s |",
            "| ---: | ---: | ---: | ---: | ---: |",
            *(
                f"| {p['temperature']} | {fmt(p['pass_at_1'], '.3f')} | "
                f"{fmt(p['zero_variance_groups'], '.0%')} | {p['generation_s']:.2f} | "
                f"{p['reward_s']:.2f} |"
                for p in r["temperature_probe"]
            ),
            "",
        ]
    if r["warning"]:
        lines += [f"**Warning:** {r['warning']}", ""]
    return "\n".join(lines)


def by_tenths(values: list[float | None]) -> list[float | None]:
    """The mean of each tenth of `values` in order (fewer parts when there are fewer than 10)."""
    parts = min(10, len(values))
    out: list[float | None] = []
    for i in range(parts):
        chunk = [v for v in values[i * len(values) // parts : (i + 1) * len(values) // parts]
                 if v is not None]  # fmt: skip
        out.append(sum(chunk) / len(chunk) if chunk else None)
    return out


def passk_note(passk: dict[str, dict], fmt: Any) -> list[str]:
    """pass@k before and after, per split: sharpening (pass@1 up, pass@large-k flat) or new
    solutions (pass@large-k up)."""
    first = next(iter(passk.values()))["before"]
    ks = list(first["pass_at_k"])
    lines = [
        (
            f"pass@k at temperature {first['temperature']} (the unbiased estimator over each "
            "task's rollouts; the test split's tasks were never fitted):"
        ),
        "",
        "| split | tasks | rollouts per task | policy | "
        + " | ".join(f"pass@{k}" for k in ks)
        + " |",
        "| --- | ---: | ---: | --- |" + " ---: |" * len(ks),
    ]
    for split, pair in passk.items():
        for when in ("before", "after"):
            t = pair[when]
            cells = " | ".join(fmt(t["pass_at_k"].get(k), ".3f") for k in ks)
            lines.append(f"| {split} | {t['problems']} | {t['samples']} | {when} | {cells} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    summary = run(args)
    print((args.out / NOTE_FILE).read_text())
    print(f"summary: {args.out / SUMMARY_FILE}")
    if summary["rlvr"]["warning"]:
        log.warning(summary["rlvr"]["warning"])


if __name__ == "__main__":
    main()
