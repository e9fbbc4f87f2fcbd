"""`aletheia sample`: the same stage function the flows call."""

from __future__ import annotations

import typer

from pipeline.common.stage_cli import PROBLEMS, ConfigFile, Given, StageCommand, add_stage_command
from pipeline.judge.cli import stderr_console as _console
from pipeline.judge.cli import summary_table


def _sample(given: Given) -> None:
    from pipeline.sampling.stage import CANDIDATES_FILE, sample

    cfg = given.config()
    out = given.paths["out"]
    stats = sample(cfg, given.paths["problems"], out)
    console = _console()
    console.print(summary_table("sample", stats["by_generator_language"], judged=False))
    for name, s in stats["sources"].items():
        console.print(
            f"  {name}: "
            + ", ".join(
                f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in s.items()
            )
        )
    if not stats.get("complete", True):
        console.print("[yellow]some units failed to generate: run again to retry them[/yellow]")
    console.print(f"wrote {out / CANDIDATES_FILE} ({stats['candidates']} candidates)")


SAMPLE_COMMAND = StageCommand(
    name="sample",
    stage="sample",
    help="Generate candidates from a policy pool, references and mutants (resumable).",
    inputs={"problems": PROBLEMS},
    config=ConfigFile(
        "pipeline.sampling.config:SampleConfig",
        "pool YAML (configs/pools/): the `sample:` section alone",
        section="sample",
        flag="--pool",
        what="pool config",
        required=True,
    ),
    run=_sample,
    errors=(ValueError,),
)


def register(app: typer.Typer) -> None:
    add_stage_command(app, SAMPLE_COMMAND)
