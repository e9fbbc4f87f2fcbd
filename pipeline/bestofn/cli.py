"""`aletheia best-of-n`: a verifier picks one of each problem's N policy samples; the sandbox
judges the pick; the report puts it beside random, oracle and verifier-free baselines."""

from __future__ import annotations

from typing import Annotated

import typer

from pipeline.bestofn.config import BestOfNConfig
from pipeline.common.stage_cli import (
    ConfigFile,
    Extra,
    FieldOption,
    Given,
    PathOption,
    StageCommand,
    add_stage_command,
)
from pipeline.judge.engine_option import ENGINE_OPTIONS, sandbox_given

BackendOpt = Annotated[
    str | None,
    typer.Option(
        "--backend",
        help="how the verifier generates (overrides the config): transformers | vllm | a server "
        "URL (OpenAI-compatible, e.g. vLLM) | a YAML mapping such as "
        "'{type: openai, base_url: URL, concurrency: 64}'",
    ),
]


LogprobsOpt = Annotated[
    str | None,
    typer.Option(
        "--logprobs-from",
        help="the policy that wrote the samples (a model folder): score each completion's mean "
        "token log-prob under it first, for the highest-mean-log-prob baseline (an "
        "evaluate-policy folder's samples carry none); written to OUT/samples_logprob.jsonl",
    ),
]


def _best_of_n(given: Given) -> None:
    from pipeline.errors import UserError, near_path, read_mapping, validate

    for flag, name in (("--problems", "problems"), ("--samples", "policy_samples")):
        if not given.paths[name].exists():  # type: ignore[union-attr]
            where = given.paths[name]
            raise UserError(f"{flag}: no such file or folder {where}{near_path(where)}")  # type: ignore[arg-type]
    # The file and the flags together, validated once: `verifier` may come from either.
    path = given.section_path  # -c: the Best-of-N config file
    raw = read_mapping(path, what="Best-of-N config") if path is not None else {}
    flags = {k: v for k, v in given.fields.get(BestOfNConfig, {}).items() if v is not None}
    cfg = validate(raw | flags, BestOfNConfig, path or "best-of-n options")
    if given.extras["backend"] is not None:
        from pipeline.evaluate.config import backend_option

        try:
            backend = backend_option(given.extras["backend"])
        except ValueError as exc:
            raise UserError(str(exc)) from None
        cfg = cfg.model_copy(update={"backend": backend})
    cfg = cfg.model_copy(update={"sandbox": sandbox_given(given, cfg.sandbox)})
    if cfg.backend.type == "transformers":  # a served name is no path
        from pipeline.model_refs import require_model

        require_model(cfg.verifier, "--verifier")
    from pipeline.evaluate.cli import check_templates
    from pipeline.judge.availability import probe_judge

    check_templates("", cfg)
    probe_judge(cfg.sandbox, languages=["python"])  # a dead engine: one line, before torch
    from pipeline.bestofn.stage import run_best_of_n

    out, samples = given.paths["out"], given.paths["policy_samples"]
    if given.extras["logprobs_from"] is not None:
        from pipeline.bestofn.logprobs import score_policy_samples
        from pipeline.judge.stage import load_problems

        samples = score_policy_samples(
            given.extras["logprobs_from"],
            load_problems(given.paths["problems"]),  # type: ignore[arg-type]
            samples,  # type: ignore[arg-type]
            out / "samples_logprob.jsonl",  # type: ignore[operator]
        )
    done = run_best_of_n(cfg, given.paths["problems"], samples, out, force=given.force)
    if done.cached:
        typer.echo(f"{out}: the same samples, verifier and settings: reused (nothing ran)")
    typer.echo((out / "report.md").read_text())


BEST_OF_N_COMMAND = StageCommand(
    name="best-of-n",
    help="A verifier picks one of each problem's N policy samples; the sandbox judges the pick; "
    "report beside random, oracle and verifier-free baselines.",
    inputs={
        "problems": PathOption(
            ("--problems", "-p"), "problems Parquet with tests (`problems ingest`)", dir_okay=False
        ),
        "policy_samples": PathOption(
            ("--samples",),
            "the policy's samples: an `evaluate-policy` report folder, or a JSONL / Parquet "
            "of programs (docs/best-of-n.md)",
        ),
    },
    out=PathOption(("--out", "-o"), "report folder"),
    config=ConfigFile(BestOfNConfig, "BestOfNConfig YAML; the options override its keys"),
    fields=(
        FieldOption(BestOfNConfig, "verifier", ("--verifier",)),
        FieldOption(BestOfNConfig, "name", ("--name",)),
        FieldOption(BestOfNConfig, "mode", ("--mode",)),
        FieldOption(BestOfNConfig, "samples", ("--n",)),
        FieldOption(BestOfNConfig, "k", ("--k",)),
        FieldOption(BestOfNConfig, "scoring", ("--scoring/--no-scoring",)),
        FieldOption(BestOfNConfig, "both_orders", ("--both-orders/--one-order",)),
        FieldOption(BestOfNConfig, "knockout_size", ("--knockout-size",)),
        FieldOption(BestOfNConfig, "style", ("--style",)),
        FieldOption(BestOfNConfig, "constrain_answer", ("--constrain-answer/--free-answer",)),
        FieldOption(BestOfNConfig, "temperature", ("--temperature",)),
        FieldOption(BestOfNConfig, "max_new_tokens", ("--max-new-tokens",)),
        FieldOption(BestOfNConfig, "limit", ("--limit",)),
        FieldOption(BestOfNConfig, "seed", ("--seed",)),
        FieldOption(BestOfNConfig, "curve", ("--curve/--no-curve",)),
        FieldOption(BestOfNConfig, "time_limit_scale", ("--time-limit-scale",)),
    ),
    extras={
        "backend": Extra(BackendOpt, None),
        "logprobs_from": Extra(LogprobsOpt, None),
        **ENGINE_OPTIONS,
    },
    force=True,
    run=_best_of_n,
    errors=(ValueError, FileNotFoundError),
)


def register(app: typer.Typer) -> None:
    add_stage_command(app, BEST_OF_N_COMMAND)
