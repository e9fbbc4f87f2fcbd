"""`aletheia assemble | adversarial | dpo`: the same stage functions the flows call."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from pipeline.common.stage_cli import (
    PROBLEMS,
    ConfigFile,
    Extra,
    Given,
    PathOption,
    StageCommand,
    add_stage_command,
)
from pipeline.judge.engine_option import ENGINE_OPTIONS, sandbox_given

console = Console(stderr=True)

OUT = PathOption(("--out", "-o"), "output folder (Parquet + stats.json)")


def _splits_table(stats: dict[str, Any]) -> Table:
    t = Table(title="assemble")
    for c in ("split", "rows", "problems", "sizes 2/3/4/5", "languages", "correct at A/B/C/D/E"):
        t.add_column(c, justify="left" if c in ("split", "languages") else "right")
    rows = [(name, s) for name, s in stats["splits"].items()]
    rows += [(f"{name} (test)", s["test"]) for name, s in stats["splits"].items() if "test" in s]
    for name, s in rows:
        if not s.get("rows"):
            t.add_row(name, "0", "0", "0/0/0/0", "", "")
            continue
        sizes = "/".join(str(s["by_size"].get(str(k), 0)) for k in range(2, 6))
        pos = "/".join(str(s["by_position"].get(str(k), 0)) for k in range(5))
        langs = ", ".join(f"{k}:{v}" for k, v in s["by_language"].items())
        t.add_row(name, str(s["rows"]), str(s["problems"]), sizes, langs, pos)
    return t


def _bias_table(stats: dict[str, Any]) -> Table:
    t = Table(title="adversarial edits by bias type")
    cols = [
        "planned",
        "accepted",
        "rejected_verdict_changed",
        "rejected_pass_rate_changed",
        "rejected_shape",
        "copies_rejected_by_rejudge",
        "not_applicable",
        "not_rejudged",
    ]
    t.add_column("bias")
    for c in cols:
        t.add_column(c.replace("_", " "), justify="right")
    for name, counts in stats["by_bias"].items():
        t.add_row(name, *(str(counts.get(c, 0)) for c in cols))
    return t


def _assemble(given: Given) -> None:
    from pipeline.instances.stage import assemble

    cfg = given.config()
    if given.extras["seed"] is not None:
        cfg = cfg.model_copy(update={"seed": given.extras["seed"]})
    out = given.paths["out"]
    start = time.perf_counter()
    with console.status("assembling instances"):
        stats = assemble(
            given.paths["judged"], given.paths["problems"], given.paths["splits"], out, cfg
        )
    console.print(_splits_table(stats))
    left = stats["input"]["left_out"]
    console.print(
        f"{stats['input']['judged_rows']} judged rows, {stats['input']['eligible']} eligible, "
        f"{stats['input']['quarantined']} quarantined, left out: {left}"
    )
    console.print(f"wrote {out}/ in {time.perf_counter() - start:.1f}s")


def _adversarial(given: Given) -> None:
    from pipeline.judge.availability import probe_judge

    sandbox = sandbox_given(given)
    # every edit is re-judged: a dead engine is said first, before polars and the stage load
    probe_judge(sandbox)
    from pipeline.instances.adversarial.config import AdversarialConfig
    from pipeline.instances.stage import adversarial

    mixed = given.extras["mixed"]
    cfg = given.config(AdversarialConfig, AdversarialConfig.mixed if mixed else None)
    cfg.judge.progress = True
    stats = adversarial(
        given.paths["instances"], given.paths["problems"], given.paths["out"], cfg, sandbox=sandbox
    )
    console.print(_bias_table(stats))
    console.print(
        f"{stats['rows_out']} rows ({stats['rows_with_edits']} edited) from {stats['instances_in']} "
        f"({stats['construction']}); {stats['edits_accepted']}/{stats['edits_planned']} edits "
        f"kept their verdict; rows by bias type: {stats['rows_by_modification']}"
    )
    console.print(f"wrote {given.paths['out']}/{stats['output']}")


def _dpo(given: Given) -> None:
    from pipeline.instances.dpo.config import JudgeModelSpec
    from pipeline.instances.stage import build_dpo
    from pipeline.model_refs import require_model

    cfg = given.config()
    for m in given.extras["model"] or []:
        name, _, path = m.partition("=")
        if not path:
            name, path = Path(m).name, m
        require_model(path, f"--model {m}")
        cfg.judges.append(JudgeModelSpec(name=name, model=path))
    stats = build_dpo(given.paths["instances"], given.paths["out"], cfg)
    t = Table(title="dpo responses by judge")
    for c in ("judge", "responses", "correct", "invalid", "errors", "chosen", "rejected"):
        t.add_column(c, justify="left" if c == "judge" else "right")
    for name, acc in stats["responses_by_judge"].items():
        t.add_row(
            name,
            *(str(acc[k]) for k in ("responses", "correct", "invalid", "errors")),
            str(stats["chosen_by_judge"].get(name, 0)),
            str(stats["rejected_by_judge"].get(name, 0)),
        )
    console.print(t)
    console.print(
        f"{stats['pairs']} pairs ({stats['construction']}) from {stats['instances']} instances; "
        f"chosen: {stats['chosen_source']}; short of pairs: {stats['instances_short_of_pairs']}"
    )
    console.print(f"wrote {given.paths['out']}/{stats['output']}")


def _config_file(model: str, section: str, **kw: Any) -> ConfigFile:
    # named, not imported: the instance schemas load pyarrow, after the engine has answered
    return ConfigFile(
        f"pipeline.instances.{model}",
        f"YAML of the `{section}:` section alone (configs/instances/); neither: the defaults",
        section=section,
        **kw,
    )


def _adversarial_section(run: Any, extras: Any) -> Any:
    return run.mixed if extras["mixed"] else run.adv


COMMANDS = (
    StageCommand(
        name="assemble",
        stage="assemble",
        help="Instances with exactly one correct candidate: train, heldout, strong, hard.",
        inputs={
            "judged": PathOption(("--judged", "-j"), "judged candidates Parquet"),
            "problems": PROBLEMS,
            "splits": PathOption(("--splits",), "split folder (assignments.parquet)"),
        },
        out=OUT,
        config=_config_file("config:AssembleConfig", "assemble"),
        extras={
            "seed": Extra(
                Annotated[int | None, typer.Option(help="override the config's seed")], None
            )
        },
        run=_assemble,
        errors=(ValueError, FileNotFoundError, TypeError),
    ),
    StageCommand(
        name="adversarial",
        stage="adversarial",
        help="Adv / Mixed: bias edits, every edited program judged again in the sandbox.",
        inputs={
            "instances": PathOption(("--instances", "-i"), "instances Parquet (heldout or train)"),
            "problems": PathOption(("--problems", "-p"), "problems Parquet (for the re-judge)"),
        },
        out=OUT,
        config=_config_file(
            "adversarial.config:AdversarialConfig", "adv", pick=_adversarial_section
        ),
        extras={
            "mixed": Extra(
                Annotated[
                    bool,
                    typer.Option(
                        help="Mixed, not Adv: the run config's `mixed:` section (not `adv:`); "
                        "without a config, Mixed's defaults (25% of instances)"
                    ),
                ],
                False,
            ),
            **ENGINE_OPTIONS,
        },
        run=_adversarial,
        errors=(ValueError, FileNotFoundError, TypeError),
    ),
    StageCommand(
        name="dpo",
        stage="dpo-pairs",
        help="DPO pairs: real verifier responses, chosen picks the correct letter, rejected does not.",
        inputs={
            "instances": PathOption(("--instances", "-i"), "instances Parquet (train or mixed)")
        },
        out=OUT,
        config=_config_file("dpo.config:DPOConfig", "dpo"),
        extras={
            "model": Extra(
                Annotated[
                    list[str] | None,
                    typer.Option(
                        metavar="NAME=PATH",
                        help="A judge model added to the config's judges: NAME=PATH, a local folder or a "
                        "Hub id, run here with the transformers backend (other backends: use --config). "
                        "Repeatable.",
                    ),
                ],
                None,
            )
        },
        run=_dpo,
        errors=(ValueError, OSError, TypeError),  # OSError: a judge model that cannot load
    ),
)


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the `aletheia` app."""
    for command in COMMANDS:
        add_stage_command(app, command)
