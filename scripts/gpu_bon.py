"""The Best-of-N table on a GPU node (no Docker, no Prefect): MBPP's own JSONL -> the fitted
line-level policy (as the RLVR runs fit it) -> N samples per problem judged by a judge engine
(`process` on a node without Docker) -> a verifier's pick in each mode, beside random pick,
oracle and the verifier-free baselines.

    python scripts/gpu_bon.py --mbpp PATH/mbpp.jsonl --out DIR [--engine process] [--device cuda]

Writes DIR/table.md (one row per selection mode and selector), DIR/summary.json (the numbers,
timings, device, engine stamp) and, per mode, DIR/bon-<mode>/ (report.md, report.json,
bon_curve.png, per_problem.parquet, verifier_responses.jsonl). scripts/gpu_bon.sh wraps it
for the lent GPU machine (wheels carried, results copied to $OUT).

Why the train split by default: a line-level policy writes only lines it was fitted on, so on
MBPP test it never writes a test task's function (pass@1 0.000 measured, docs/rlvr-study.md);
on the tasks it was fitted on, sampled hot, it writes right and wrong programs alike, which is
where picking one of N can show anything. `--split test` runs the honest zero.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from sandbox.engines import ENGINES


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    ap.add_argument("--mbpp", type=Path, required=True, help="MBPP's own mbpp.jsonl")
    ap.add_argument("--out", type=Path, required=True, help="output folder")
    ap.add_argument("--split", default="train", help="MBPP split Best-of-N runs on")
    ap.add_argument("--limit", type=int, default=None, help="first N problems of the split")
    ap.add_argument("--engine", default="process", choices=ENGINES)
    ap.add_argument("--url", default=None, help="http engine: the judge server")
    ap.add_argument("--pool-size", type=int, default=None, help="programs at once (None: CPUs)")
    ap.add_argument("--no-check-references", dest="check_references", action="store_false")
    ap.add_argument("--device", default="auto", help="auto (cuda when there is one), cuda, cpu")
    fit = ap.add_argument_group("the policy (pipeline.models.policy; scripts/gpu_rlvr.sh's fit)")
    fit.add_argument("--policy", type=Path, default=None, help="a fitted policy folder to reuse")
    fit.add_argument("--fit-steps", type=int, default=3000)
    fit.add_argument("--hidden", type=int, default=128)
    fit.add_argument("--layers", type=int, default=4)
    fit.add_argument("--fit-lr", type=float, default=3e-3)
    fit.add_argument("--fit-batch", type=int, default=64)
    fit.add_argument("--seed", type=int, default=0)
    samp = ap.add_argument_group("the samples")
    samp.add_argument("--n", type=int, default=8, help="samples per problem (N)")
    samp.add_argument(
        "--temperature",
        type=_temperature,
        default="auto",
        help="policy temperature, or auto: each of --probe-temperatures on the first "
        "--probe-problems problems, the one whose pass@1 is nearest 0.5 (Best-of-N can only "
        "show a verifier's worth where some samples fail and some pass)",
    )
    samp.add_argument("--probe-temperatures", default="1.0,1.6,2.2,3.0")
    samp.add_argument("--probe-problems", type=int, default=48)
    samp.add_argument("--max-tokens", type=int, default=48, help="tokens (lines) per sample")
    samp.add_argument("--no-logprobs", dest="logprobs", action="store_false",
                      help="skip scoring the samples' log-probs (that baseline left out)")  # fmt: skip
    ver = ap.add_argument_group("the verifier")
    ver.add_argument("--verifier", type=Path, default=None, help="a trained verifier folder; "
                     "default: the tiny random verifier, built into OUT/verifier")  # fmt: skip
    ver.add_argument("--modes", default="list,pairwise", help="comma-separated selection modes")
    ver.add_argument("--k", type=int, default=1, help="verifier responses per prompt")
    ver.add_argument("--max-new-tokens", type=int, default=32, help="verifier response budget")
    ver.add_argument("--free-answer", dest="constrain", action="store_false",
                     help="no constrained answers (a random verifier then never parses)")  # fmt: skip
    ver.add_argument("--no-curve", dest="curve", action="store_false", help="ask at N only")
    return ap.parse_args(argv)


def resolve_device(name: str) -> str:
    if name != "auto":
        return name
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _temperature(text: str) -> float | str:
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a number or auto") from None


def probe_temperature(
    args: argparse.Namespace, split: Path, policy: Path, engine: Any, device: str, work: Path
) -> tuple[float, list[dict[str, Any]]]:
    """The probe temperature whose pass@1 on the first problems is nearest 0.5 (ties: the
    lower temperature), and the probe's table."""
    from pipeline.common.parquet import write_parquet
    from pipeline.judge.stage import load_problems
    from pipeline.policy_eval.run import evaluate_policy
    from schemas.problem import PROBLEM_SCHEMA
    from schemas.tables import models_to_table

    first = list(load_problems(split).values())[: args.probe_problems]
    path = work / "probe-problems.parquet"
    write_parquet(models_to_table(first, PROBLEM_SCHEMA), path, PROBLEM_SCHEMA)
    table = []
    for t in [float(x) for x in args.probe_temperatures.split(",")]:
        report = evaluate_policy(policy_eval_config(args, policy, device, t), path,
                                 work / f"probe-{t}", client=engine)  # fmt: skip
        table.append({"temperature": t, "pass_at_1": report["pass"]["pass@1"]["value"],
                      "pass_at_n": report["pass"][f"pass@{args.n}"]["value"]})  # fmt: skip
    best = min(table, key=lambda r: (abs(r["pass_at_1"] - 0.5), r["temperature"]))
    return best["temperature"], table


def policy_eval_config(args: argparse.Namespace, policy: Path, device: str, temperature: float):
    from pipeline.policy_eval.config import PolicyEvalConfig

    batch = 64 if device == "cuda" else 8
    return PolicyEvalConfig(
        model=str(policy), name="mbpp-fitted", split=args.split, samples=args.n,
        k=[1, args.n], temperature=temperature, max_tokens=args.max_tokens,
        seed=args.seed, progress=False,
        backend={"type": "transformers", "device": device, "batch_size": batch},
    )  # fmt: skip


def problems_files(args: argparse.Namespace, work: Path, engine: Any) -> tuple[Path, Path, dict]:
    """(train problems, the Best-of-N split's problems, what happened to them)."""
    from pipeline.common.parquet import write_parquet
    from pipeline.judge.stage import load_problems
    from pipeline.problems.config import IngestConfig
    from pipeline.problems.stage import ingest
    from schemas.problem import PROBLEM_SCHEMA
    from schemas.tables import models_to_table

    ingested = work / "problems.parquet"
    ingest([f"mbpp:{args.mbpp}"], ingested, IngestConfig(), show_progress=False)
    every = sorted(
        load_problems(ingested).values(),
        key=lambda p: (int(p.source_id) if p.source_id.isdigit() else 1 << 62, p.problem_id),
    )
    train = [p for p in every if p.source_split == "train"]
    chosen = [p for p in every if p.source_split == args.split][: args.limit]
    paths = {}
    for name, rows in (("train", train), ("split", chosen)):
        paths[name] = work / f"{name}.parquet"
        write_parquet(models_to_table(rows, PROBLEM_SCHEMA), paths[name], PROBLEM_SCHEMA)
    facts: dict[str, Any] = {"train": len(train), args.split: len(chosen)}
    if args.check_references:
        from pipeline.problems.reference_check import check_references

        checked = check_references(
            paths["split"], work / "references", client=engine, progress=False
        )
        facts["reference_check"] = {k: checked[k] for k in ("reference_pass", "quarantined")}
        paths["split"] = work / "references" / "split.verified.parquet"
    return paths["train"], paths["split"], facts


def fit(args: argparse.Namespace, train: Path, device: str, out: Path) -> tuple[Path, float]:
    if args.policy is not None:
        return args.policy, 0.0
    from pipeline.judge.stage import load_problems
    from pipeline.models.config import PolicyFit
    from pipeline.models.policy import examples_from_problems, fit_policy

    spec = PolicyFit(
        name="mbpp-bon", dir=out / "policy", languages=["python"], steps=args.fit_steps,
        hidden_size=args.hidden, num_layers=args.layers, learning_rate=args.fit_lr,
        batch_size=args.fit_batch, seed=args.seed, device=device,
    )  # fmt: skip
    t0 = time.perf_counter()
    path = fit_policy(spec, examples_from_problems(load_problems(train).values(), spec))
    return path, time.perf_counter() - t0


def table(results: dict[str, dict[str, Any]]) -> str:
    from pipeline.bestofn.metrics import LABELS

    keys = ("verifier", "random", "oracle", "majority", "shortest", "logprob")
    lines = [
        "| mode | problems | N | " + " | ".join(LABELS[k] for k in keys) + " | unparseable picks |",
        "| --- | ---: | ---: | " + " | ".join("---:" for _ in keys) + " | ---: |",
    ]
    for mode, r in results.items():
        m = r["summary"]["all"]["methods"]

        def cell(k: str, m: dict = m) -> str:
            if k not in m:
                return "-"
            return f"{m[k]['value']:.3f} [{m[k]['ci_low']:.3f}, {m[k]['ci_high']:.3f}]"

        c = r["summary"]["all"]["verifier_counts"]
        lines.append(
            f"| {mode} | {r['problems']} | {r['n']} | "
            + " | ".join(cell(k) for k in keys)
            + f" | {c['unparseable']} |"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from pipeline.bestofn.config import BestOfNConfig
    from pipeline.bestofn.run import best_of_n
    from pipeline.judge.config import SandboxSection
    from pipeline.judge.interface import open_judge
    from pipeline.models.tiny import build_tiny_model
    from pipeline.policy_eval.run import evaluate_policy

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    device = resolve_device(args.device)
    sandbox = SandboxSection(
        engine=args.engine,
        **({"url": [args.url]} if args.url else {}),
        **({"pool_size": args.pool_size} if args.pool_size else {}),
    )
    times: dict[str, float] = {}
    summary: dict[str, Any] = {"device": device, "python": platform.python_version()}
    if device == "cuda":
        import torch

        summary["gpu"] = torch.cuda.get_device_name(0)
    with open_judge(sandbox) as engine:
        summary["judge_stamp"] = engine.stamp
        t0 = time.perf_counter()
        train, split, summary["problems"] = problems_files(args, out / "work", engine)
        times["problems_s"] = time.perf_counter() - t0
        policy, times["fit_s"] = fit(args, train, device, out)
        temperature = args.temperature
        if temperature == "auto":
            t0 = time.perf_counter()
            temperature, summary["temperature_probe"] = probe_temperature(
                args, split, policy, engine, device, out / "work"
            )
            times["probe_s"] = time.perf_counter() - t0
        summary["temperature"] = temperature
        pe = policy_eval_config(args, policy, device, temperature)
        t0 = time.perf_counter()
        policy_report = evaluate_policy(pe, split, out / "policy-eval", client=engine)
        times["sample_and_judge_s"] = time.perf_counter() - t0
        summary["policy"] = {"pass": policy_report["pass"], "model": str(policy)}
        samples: Path = out / "policy-eval"
        if args.logprobs:  # the highest-mean-log-prob baseline: each completion scored
            from pipeline.bestofn.logprobs import score_policy_samples
            from pipeline.judge.stage import load_problems

            t0 = time.perf_counter()
            samples = score_policy_samples(
                policy, load_problems(split), samples, out / "samples_logprob.jsonl", device=device
            )
            times["logprobs_s"] = time.perf_counter() - t0
        verifier = args.verifier or build_tiny_model(out / "verifier")
        results = {}
        for mode in [m.strip() for m in args.modes.split(",") if m.strip()]:
            cfg = BestOfNConfig(
                verifier=str(verifier), mode=mode, k=args.k, constrain_answer=args.constrain,
                max_new_tokens=args.max_new_tokens, curve=args.curve, seed=args.seed,
                progress=False, sandbox=sandbox,
                backend={"type": "transformers", "device": device, "batch_size": 4096 if device == "cuda" else 16},
            )  # fmt: skip
            t0 = time.perf_counter()
            results[mode] = best_of_n(cfg, split, samples, out / f"bon-{mode}", client=engine)
            times[f"bon_{mode}_s"] = time.perf_counter() - t0
    summary["verifier"] = str(verifier)
    summary["times"] = times
    summary["modes"] = {m: r["summary"]["all"] for m, r in results.items()}
    summary["notes"] = {m: r["notes"] for m, r in results.items()}
    summary["modules_absent"] = [m for m in ("prefect", "polars") if m not in sys.modules]
    text = table(results)
    (out / "table.md").write_text(text + "\n")
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    print(text)
    print(json.dumps({"times": times, "device": device, "judge": summary["judge_stamp"]}, indent=2))
    return summary


def main(argv: list[str] | None = None) -> None:
    run(parse_args(argv))


if __name__ == "__main__":
    main()
