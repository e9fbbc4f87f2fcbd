"""`aletheia assemble | adversarial | dpo`: the same stage functions the flows call."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from pipeline.judge.engine_option import EngineOpt, TokenFileOpt, UrlOpt

console = Console(stderr=True)

ConfigOpt = Annotated[
    Path | None, typer.Option("--config", "-c", help="YAML config (defaults otherwise)")
]
OutOpt = Annotated[Path, typer.Option("--out", "-o", help="output folder (Parquet + stats.json)")]


def _fail(e: Exception) -> typer.Exit:
    from pipeline.errors import fail

    return fail(e)  # `error: <one line>`, as `aletheia` prints its own


def _config(path: Path | None, model: Any, default: Any) -> Any:
    """The stage config from `path` (a mistake is one line naming the file and key)."""
    from pipeline.errors import load_config

    return load_config(path, model, what="config") if path else default()


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


def assemble_cmd(
    judged: Annotated[Path, typer.Option("--judged", "-j", help="judged candidates Parquet")],
    problems: Annotated[Path, typer.Option("--problems", "-p", help="problems Parquet")],
    splits: Annotated[Path, typer.Option("--splits", help="split folder (assignments.parquet)")],
    out: OutOpt,
    config: ConfigOpt = None,
    seed: Annotated[int | None, typer.Option(help="override the config's seed")] = None,
) -> None:
    """Instances with exactly one correct candidate: train, heldout, strong, hard."""
    from pipeline.instances.config import AssembleConfig
    from pipeline.instances.stage import assemble

    try:
        cfg = _config(config, AssembleConfig, AssembleConfig)
        if seed is not None:
            cfg = cfg.model_copy(update={"seed": seed})
        start = time.perf_counter()
        with console.status("assembling instances"):
            stats = assemble(judged, problems, splits, out, cfg)
    except (ValueError, FileNotFoundError, TypeError) as e:
        raise _fail(e) from e
    console.print(_splits_table(stats))
    left = stats["input"]["left_out"]
    console.print(
        f"{stats['input']['judged_rows']} judged rows, {stats['input']['eligible']} eligible, "
        f"{stats['input']['quarantined']} quarantined, left out: {left}"
    )
    console.print(f"wrote {out}/ in {time.perf_counter() - start:.1f}s")


def adversarial_cmd(
    instances: Annotated[
        Path, typer.Option("--instances", "-i", help="instances Parquet (heldout or train)")
    ],
    problems: Annotated[
        Path, typer.Option("--problems", "-p", help="problems Parquet (for the re-judge)")
    ],
    out: OutOpt,
    config: ConfigOpt = None,
    mixed: Annotated[
        bool, typer.Option(help="Mixed defaults (25% of instances) when no --config")
    ] = False,
    engine: EngineOpt = None,
    url: UrlOpt = None,
    token_file: TokenFileOpt = None,
) -> None:
    """Adv / Mixed: bias edits, every edited program judged again in the sandbox."""
    from pipeline.judge.availability import probe_judge
    from pipeline.judge.config import SandboxSection

    try:
        sandbox = SandboxSection().overridden(engine, url, token_file)
        # every edit is re-judged: a dead engine is said first, before polars and the stage load
        probe_judge(sandbox)
        from pipeline.instances.adversarial.config import AdversarialConfig
        from pipeline.instances.stage import adversarial

        default = AdversarialConfig.mixed if mixed else AdversarialConfig
        cfg = _config(config, AdversarialConfig, default)
        cfg.judge.progress = True
        stats = adversarial(instances, problems, out, cfg, sandbox=sandbox)
    except (ValueError, FileNotFoundError, TypeError) as e:
        raise _fail(e) from e
    console.print(_bias_table(stats))
    console.print(
        f"{stats['rows_out']} rows ({stats['rows_with_edits']} edited) from {stats['instances_in']} "
        f"({stats['construction']}); {stats['edits_accepted']}/{stats['edits_planned']} edits "
        f"kept their verdict; rows by bias type: {stats['rows_by_modification']}"
    )
    console.print(f"wrote {out}/{stats['output']}")


def dpo_cmd(
    instances: Annotated[
        Path, typer.Option("--instances", "-i", help="instances Parquet (train or mixed)")
    ],
    out: OutOpt,
    config: ConfigOpt = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME=PATH",
            help="A judge model added to the config's judges: NAME=PATH, a local folder or a "
            "Hub id, run here with the transformers backend (other backends: use --config). "
            "Repeatable.",
        ),
    ] = None,
) -> None:
    """DPO pairs: real verifier responses, chosen picks the correct letter, rejected does not."""
    from pipeline.instances.dpo.config import DPOConfig, JudgeModelSpec
    from pipeline.instances.stage import build_dpo
    from pipeline.model_refs import require_model

    try:
        cfg = _config(config, DPOConfig, DPOConfig)
        for m in model or []:
            name, _, path = m.partition("=")
            if not path:
                name, path = Path(m).name, m
            require_model(path, f"--model {m}")
            cfg.judges.append(JudgeModelSpec(name=name, model=path))
        stats = build_dpo(instances, out, cfg)
    except (ValueError, OSError, TypeError) as e:  # OSError: a judge model that cannot load
        raise _fail(e) from e
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
    console.print(f"wrote {out}/{stats['output']}")


COMMANDS = {"assemble": assemble_cmd, "adversarial": adversarial_cmd, "dpo": dpo_cmd}


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the `aletheia` app."""
    for name, command in COMMANDS.items():
        app.command(name)(command)
