"""The commands that run flows directly, without a Prefect server: `aletheia build-train` /
`build-eval`, `rlvr-study` and `ablation`; and `aletheia stage NODE`, one node of the build
graph run inline (pipeline/executor.py), without Prefect at all.

The run config is read and the preflight (pipeline/preflight.py) runs before Prefect is
touched, so a typo or a missing model is one line in a second, not a traceback after the
temporary API server has started. `--dry-run` stops after printing the plan. Prefect runs
the flows against a temporary local API; the same code runs as deployments via prefect.yaml.
Ctrl-C stops a build within seconds and keeps what finished (pipeline/interrupt.py).
`ablation --plan` lists its cells and their state without training anything.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pipeline.judge.engine_option import EngineOpt, TokenFileOpt, UrlOpt
from pipeline.node_names import NODES

if TYPE_CHECKING:
    from pipeline.config import RunConfig
    from pipeline.preflight import Report

ConfigOpt = Annotated[Path, typer.Option("--config", "-c", help="run config YAML (see configs/)")]
DryRunOpt = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="check sources, models, Hub, Docker and vLLM environments, print the plan, stop",
    ),
]
LimitOpt = Annotated[
    int | None,
    typer.Option(
        "--limit",
        min=1,
        help="read only the first N problems of each source (ingest.limit_per_source)",
    ),
]


def _prepare(
    config: Path,
    limit: int | None,
    dry_run: bool,
    engine: str | None = None,
    url: list[str] | None = None,
    token_file: Path | None = None,
    check: Callable[[RunConfig], Report] | None = None,
) -> RunConfig:
    """The run config, resolved once and preflighted once, before Prefect starts: the flow
    takes it as it is. `limit` enters the build id (ingest.limit_per_source, set before
    validation); `engine`, `url` and `token_file` override the sandbox section (after it: not
    part of the build id). `check`: what the command runs checked (default: the whole
    build). A dry run prints the report and exits."""
    from pipeline.errors import UserError, near_path

    if not config.is_file():  # said before pipeline.config loads every stage's config (2 s)
        near = near_path(config)
        more = "" if "did you mean" in near else "; see configs/ for examples"
        raise UserError(f"run config {config} not found{near}{more}")
    from pipeline.config import resolve_run_config
    from pipeline.preflight import preflight

    overrides = {"ingest.limit_per_source": limit} if limit is not None else None
    cfg = resolve_run_config(config, overrides=overrides, engine=engine)  # a typo: one line
    if url or token_file:
        cfg = cfg.model_copy(update={"sandbox": cfg.sandbox.overridden(engine, url, token_file)})
    report = (check or preflight)(cfg)
    if dry_run:
        typer.echo("\n".join(report.lines()))
        raise typer.Exit(report.exit_code)  # 2 or 3 as the same failure without --dry-run
    report.raise_if_fatal()
    return cfg


def _resume_command(name: str, config: Path, limit: int | None) -> str:
    return f"aletheia {name} -c {config}" + (f" --limit {limit}" if limit else "")


def _before_prefect() -> None:
    """Before a flow on a temporary Prefect server: two minutes to start (not 20 s, which a
    busy 2-core machine can miss) and no telemetry (flows/quiet.py), unless the user chose."""
    from flows.quiet import temporary_server_env

    temporary_server_env()


def _said(results: dict[str, Any], cfg: RunConfig) -> dict[str, Any]:
    """What a build command prints: its folders, and the outputs of the nodes it ran that no
    other node of the build reads (its ends: the evaluation's report, Adv)."""
    from pipeline import stages

    ran = [n for n in stages.GRAPH if results.get(n.name) and not isinstance(results[n.name], list)]
    read = {u for n in ran for u in n.upstream}
    ends = {n.name: results[n.name]["outputs"] for n in ran if n.name not in read}
    where = {"work_dir": str(cfg.work_dir.resolve())}
    if cfg.hub_dir.exists():
        where["hub_dir"] = str(cfg.hub_dir.resolve())
    return where | {"outputs": ends}


def _add_build(app: typer.Typer, name: str, flow: str, about: str, *, evaluation: bool) -> None:
    """`name`: a build flow of flows/build.py (`flow`) on the run config, which is checked
    first for the nodes it runs (`evaluation`: the graph's evaluation nodes, no DPO judge)."""

    def check(cfg: RunConfig) -> Report:
        from pipeline.preflight import evaluation_nodes, preflight

        only = evaluation_nodes() if evaluation else ()
        return preflight(cfg, only=only, command=f"aletheia {name} --dry-run")

    def build(
        config: ConfigOpt = Path("configs/demo.yaml"),
        dry_run: DryRunOpt = False,
        limit: LimitOpt = None,
        engine: EngineOpt = None,
        url: UrlOpt = None,
        token_file: TokenFileOpt = None,
    ) -> None:
        from pipeline.interrupt import stop_on_interrupt

        with stop_on_interrupt(_resume_command(name, config, limit)):
            cfg = _prepare(config, limit, dry_run, engine, url, token_file, check)
            _before_prefect()
            import flows.build

            results = getattr(flows.build, flow)(cfg)
        typer.echo(json.dumps(_said(results, cfg), indent=2))

    build.__name__ = name.replace("-", "_")
    app.command(name, help=about)(build)


def stage_cmd(
    node: Annotated[
        str,
        typer.Argument(
            metavar="NODE", help=f"a node of the build graph, in build order: {', '.join(NODES)}"
        ),
    ],
    config: ConfigOpt = Path("configs/demo.yaml"),
    dry_run: DryRunOpt = False,
    force: Annotated[
        bool, typer.Option("--force", help="run it again even where its marker matches")
    ] = False,
    engine: EngineOpt = None,
    url: UrlOpt = None,
    token_file: TokenFileOpt = None,
) -> None:
    """Run one node of the build graph here (its shards one after another); its upstream
    nodes must have finished (a build, or `aletheia stage` on each). --dry-run: what the
    node reads (and whether each has finished), writes and checks."""
    from pipeline import stages
    from pipeline.executor import run_node
    from pipeline.preflight import node_report

    stages.GRAPH[node]  # an unknown node: one line naming the nodes, before any check

    check = lambda cfg: node_report(cfg, node)
    cfg = _prepare(config, None, dry_run, engine, url, token_file, check)
    results = run_node(stages.GRAPH, node, cfg, force=force)
    if not results:
        typer.echo(f"{node}: the run config leaves this node out (nothing to run)")
    for done in results:
        written = {k: v for k, v in done.outputs.items() if Path(v).exists()}
        said = {"node": node, "cached": done.cached, "outputs": written}
        typer.echo(json.dumps(said, indent=2))


StudyOpt = Annotated[
    Path,
    typer.Option("--config", "-c", exists=True, dir_okay=False, help="study YAML in configs/rlvr/"),
]
AblationOpt = Annotated[
    Path,
    typer.Option(
        "--config", "-c", exists=True, dir_okay=False, help="ablation YAML in configs/ablation/"
    ),
]


def rlvr_study_cmd(
    config: StudyOpt = Path("configs/rlvr/demo.yaml"),
    engine: EngineOpt = None,
    url: UrlOpt = None,
    token_file: TokenFileOpt = None,
) -> None:
    """Base policy + RLVR per (reward, algorithm), each evaluated alike; one comparison table."""
    from pipeline.judge.availability import probe_judge
    from pipeline.policy_eval.config import StudyConfig

    study = StudyConfig.from_yaml(config)
    probe_judge(study.sandbox.overridden(engine, url, token_file), languages=["python"])
    _before_prefect()
    from flows.rlvr import rlvr_study

    out = rlvr_study(
        str(config), engine=engine, url=url, token_file=str(token_file) if token_file else None
    )
    typer.echo(Path(out["out_dir"], "study.md").read_text())


def ablation_cmd(
    config: AblationOpt = Path("configs/ablation/demo.yaml"),
    plan: Annotated[
        bool,
        typer.Option("--plan", help="list each cell (base model, batch, state); train nothing"),
    ] = False,
    across: Annotated[
        list[Path] | None,
        typer.Option(
            "--across",
            help="a size's ablation out_dir (or its comparison.json), repeated: write the "
            "table across sizes (gain and share of thinking, negatives, on-policy) instead",
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="--across: where across_sizes.md / .json go")
    ] = Path("out/ablation"),
) -> None:
    """Aletheia's ablation at one size: train its cells (GRPO-Think at each budget, GRPO-Instruct, DPO-Think, RAFT, BatchOnline-GRPO, STaR, ReST-EM), evaluate each alike; one table + Pareto plot. --across: the table across sizes."""
    from pipeline.train.ablation_config import AblationConfig

    if across:
        from pipeline.train.ablation_sizes import write_across_sizes

        view = write_across_sizes(list(across), out)
        typer.echo(Path(view["files"]["across_sizes.md"]).read_text())
        return
    cfg = AblationConfig.from_yaml(config)
    if plan:
        _ablation_plan(cfg)
        return
    _before_prefect()
    from flows.ablation import aletheia_ablation

    done = aletheia_ablation(str(config))
    typer.echo(Path(done["files"]["comparison.md"]).read_text())


def _ablation_plan(cfg: Any) -> None:
    """Each cell: its method, base model, batch, LoRA or not, folder and state."""
    from pipeline.train.ablation import read_cell, train_config

    for recipe in cfg.recipes:
        t = train_config(cfg, recipe)
        o = t.optim
        typer.echo(
            f"{t.name}: {t.method}, {t.model}, batch {o.per_device_train_batch_size} x "
            f"{o.gradient_accumulation_steps}, {'LoRA' if t.lora else 'full'} -> "
            f"{cfg.cell_dir(recipe)} [{read_cell(cfg, recipe)['status']}]"
        )


def register(app: typer.Typer) -> None:
    _add_build(app, "build-train", "build_aletheia_train", evaluation=False,
               about="Build every config (train, ..., adv) and the Hub folder, like the deployment does.")  # fmt: skip
    _add_build(app, "build-eval", "build_aletheia_eval", evaluation=True,
               about="Build the eval configs only (heldout, strong, hard, adv).")  # fmt: skip
    app.command("stage")(stage_cmd)
    app.command("rlvr-study")(rlvr_study_cmd)
    app.command("ablation")(ablation_cmd)
