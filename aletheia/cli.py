"""`aletheia`: the command line, the app shell on top of every stage package.

Each command lives beside its stage (`pipeline/<stage>/cli.py`, `flows/cli.py` for the
commands that run flows) and is added by that module's `register(app)`. The stage modules
import torch, transformers, matplotlib and the Hub client, so they are loaded only when one
of their commands runs: `aletheia --help` lists the commands from the table below without
importing any of them. Each loader is a plain import inside a small function, so the
imports stay lazy and the layer contract (`lint-imports`, tests/test_layers.py) sees every
one. A user mistake (a config typo, a missing file) prints one `error:` line; `--debug`
shows the traceback instead.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import typer
import typer.rich_utils
from rich.table import Table
from rich.text import Text
from typer import _click as click  # typer 0.29 ships its own click; its types are these
from typer.core import TyperCommand, TyperGroup

from sandbox.help_style import plain_flags


class _HelpTable(Table):
    """The options table of a help page, with every option name whole at any width.

    Rich shrinks all the columns of a table too wide for the terminal, so at 80 columns
    typer printed `--max-solution…`. Here the name columns never wrap or shrink; the type
    and help columns wrap instead, and a help word wider than its column folds onto the
    next line rather than being cut.
    """

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:
        for part in getattr(renderables[-1], "renderables", ()) if renderables else ():
            if isinstance(part, Text):  # the help cell: typer's Columns of Text
                part.overflow = "fold"
        super().add_row(*renderables, **kwargs)
        for column in self.columns[:-2]:  # required mark, long/short names, negatives
            column.no_wrap = True
        if len(renderables) >= 2:  # the type cell wraps between words, never inside one
            cell = renderables[-2]
            plain = cell.plain if isinstance(cell, Text) else str(cell or "")
            longest = max((len(word) for word in plain.split()), default=0)
            column = self.columns[len(renderables) - 2]
            column.min_width = max(column.min_width or 0, longest)


# typer builds its help tables from this module-level name, once per page.
typer.rich_utils.Table = _HelpTable  # type: ignore[misc]
plain_flags()  # no `<bool>` beside --force, --dry-run, --help


def _read_run_config(path: Any) -> Any:
    from pipeline.config import resolve_run_config

    return resolve_run_config(path)


def _run_config_keys() -> set[str]:
    from pipeline.config import RunConfig

    return set(RunConfig.model_fields)


def _stage_commands_read_run_configs() -> None:
    """A stage command's `-c` is the run config, read as the build reads it; the stages sit
    below pipeline/config.py, so the shell hands them its reader."""
    from pipeline.common.stage_cli import RunConfigReader

    RunConfigReader.use(_read_run_config, _run_config_keys)


def _problems(app: typer.Typer) -> None:
    from pipeline.problems.cli import register
    from pipeline.splits.cli import register as register_split

    register(app, register_split)  # `problems split` joins the `problems` group


def _check_references(app: typer.Typer) -> None:
    from pipeline.problems.reference_cli import register

    register(app)


def _fit_policy(app: typer.Typer) -> None:
    from pipeline.models.cli import register

    register(app)


def _sample(app: typer.Typer) -> None:
    from pipeline.sampling.cli import register

    register(app)


def _judge(app: typer.Typer) -> None:
    from pipeline.judge.cli import register

    register(app)


def _instances(app: typer.Typer) -> None:
    from pipeline.instances.cli import register

    register(app)


def _train(app: typer.Typer) -> None:
    from pipeline.train.cli import register

    register(app)


def _evaluate(app: typer.Typer) -> None:
    from pipeline.evaluate.cli import register

    register(app)


def _publish(app: typer.Typer) -> None:
    from pipeline.publish.cli import register

    register(app)


def _policy_eval(app: typer.Typer) -> None:
    from pipeline.policy_eval.cli import register

    register(app)


def _best_of_n(app: typer.Typer) -> None:
    from pipeline.bestofn.cli import register

    register(app)


def _config(app: typer.Typer) -> None:
    from pipeline.config_docs import register

    register(app)


def _flows(app: typer.Typer) -> None:
    from flows.cli import register

    register(app)


class _Entry(NamedTuple):
    register: Callable[[typer.Typer], None]  # imports the command's module, adds its commands
    help: str  # the one-line summary shown by `aletheia --help`


# In the order they appear in --help: the stages in data-flow order, then the flows.
COMMANDS: dict[str, _Entry] = {
    "problems": _Entry(
        _problems, "Problems with tests: ingest sources, split into contamination-free sets."
    ),
    "fit-policy": _Entry(
        _fit_policy,
        "Fit a tiny local code policy on problems' solutions (the demo's weak/strong models).",
    ),
    "sample": _Entry(
        _sample, "Generate candidates from a policy pool, references and mutants (resumable)."
    ),
    "judge": _Entry(_judge, "Judge every candidate in the sandbox; distinct programs run once."),
    "assemble": _Entry(
        _instances, "Instances with exactly one correct candidate: train, heldout, strong, hard."
    ),
    "adversarial": _Entry(
        _instances, "Adv / Mixed: bias edits, every edited program judged again in the sandbox."
    ),
    "dpo": _Entry(
        _instances,
        "DPO pairs: verifier-model responses, chosen picks the correct letter, rejected not.",
    ),
    "train": _Entry(
        _train, "Train a verifier (GRPO / DPO / SFT) or a code policy (RLVR) as the config says."
    ),
    "evaluate": _Entry(
        _evaluate,
        "Evaluate a verifier on Heldout, Strong, Hard and Adv; write report.json + report.md.",
    ),
    "publish": _Entry(
        _publish,
        "Re-check the invariants, write the card + shards + plots, and (with --push) release.",
    ),
    "ablation": _Entry(
        _flows,
        "Aletheia's ablation at one size: its cells trained, evaluated alike, one table "
        "(--across: the table across sizes).",
    ),
    "evaluate-policy": _Entry(
        _policy_eval,
        "Evaluate a code policy on a split: pass@k, length, Ruff profile, error types.",
    ),
    "compare-policy-reports": _Entry(
        _policy_eval, "Put policy reports side by side, with paired differences."
    ),
    "best-of-n": _Entry(
        _best_of_n,
        "Best-of-N: a verifier picks one of N policy samples; the sandbox judges the pick.",
    ),
    "rlvr-study": _Entry(
        _flows,
        "The RLVR study: base policy, one trained policy per (reward, algorithm), one table.",
    ),
    "check-references": _Entry(
        _check_references,
        "Run every reference solution in the sandbox; quarantine problems whose reference fails.",
    ),
    "build-train": _Entry(
        _flows,
        "Build every config (train, ..., adv) and the Hub folder, like the deployment does.",
    ),
    "build-eval": _Entry(_flows, "Build the eval configs only (heldout, strong, hard, adv)."),
    "stage": _Entry(
        _flows, "Run one node of the build graph here; its upstream nodes must have finished."
    ),
    "config": _Entry(
        _config, "The configs' JSON schemas and the generated reference (docs/config-reference.md)."
    ),
}

# The short-flag convention: a letter for each option that several commands share, the
# same letter for the same option on every command that has it; every other option is
# long only. tests/test_cli_help.py holds every command to this table.
SHORT_FLAGS: dict[str, str] = {
    "-c": "--config",
    "-p": "--problems",
    "-o": "--out",
    "-i": "--instances",
    "-j": "--judged",
    "-s": "--source",
}

_loaded: dict[str, click.Command] = {}


def load_command(name: str) -> click.Command | None:
    """Import the module that registers `name` and return its click command (with every
    other command the same loader adds)."""
    entry = COMMANDS.get(name)
    if entry is None:
        return None
    if name not in _loaded:
        _stage_commands_read_run_configs()
        sub = typer.Typer(add_completion=False)  # completion options belong to `aletheia` only
        entry.register(sub)
        group = typer.main.get_command(sub)
        if isinstance(group, TyperGroup):
            ctx = click.Context(group)
            for cmd_name in group.list_commands(ctx):
                cmd = group.get_command(ctx, cmd_name)
                if cmd is not None:
                    _loaded[cmd_name] = cmd
        else:  # a module with a single command
            _loaded[group.name or name] = group
    return _loaded.get(name)


class LazyGroup(TyperGroup):
    """Lists the commands from COMMANDS; imports a command's module only to run it."""

    _listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if self._listing and cmd_name in COMMANDS:  # --help: a stub with the summary only
            return TyperCommand(name=cmd_name, help=COMMANDS[cmd_name].help)
        return load_command(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            from pipeline.errors import did_you_mean

            ctx.fail(f"no such command {name!r}{did_you_mean(name, COMMANDS)}")
        return super().resolve_command(ctx, args)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        type(self)._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            type(self)._listing = False


# The exit codes (pipeline/errors.py ExitCode; docs/architecture.md "Exit codes"), spelt out
# here so that `aletheia --help` says them without importing pipeline.errors.
EXIT_CODES = (
    "Exit codes: 0 done; 1 the run failed (a stage error, a broken invariant, a bug: its "
    "traceback); 2 bad input or config (one line: what, where); 3 an engine, server or model "
    "unavailable here (one line: which); 130 interrupted."
)

app = typer.Typer(
    name="aletheia",
    cls=LazyGroup,
    help="Execution-grounded training data for code verifiers: build, publish, train, evaluate.",
    epilog=EXIT_CODES,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)

_state = {"debug": False}


@app.callback()
def _options(
    debug: bool = typer.Option(
        False, "--debug", help="Show the full traceback of an error instead of one line."
    ),
) -> None:
    _state["debug"] = debug


def main(argv: list[str] | None = None) -> None:
    """The console entry point: user mistakes as one line, bugs with their traceback; the
    exit code says the class of failure (pipeline/errors.py `ExitCode`)."""
    from pipeline.errors import ExitCode, exit_code, one_line

    args = sys.argv[1:] if argv is None else argv
    try:
        rc = app(args=args, prog_name="aletheia", standalone_mode=False)
    except typer.Exit as e:
        raise SystemExit(e.exit_code) from None
    except (typer.Abort, KeyboardInterrupt):
        raise SystemExit(ExitCode.INTERRUPTED) from None
    except click.exceptions.ClickException as e:  # a bad option or argument: one line too
        ctx = getattr(e, "ctx", None)
        where = f"  ({ctx.command_path} --help shows what it takes)" if ctx is not None else ""
        typer.echo(f"error: {' '.join(e.format_message().split())}{where}", err=True)
        raise SystemExit(e.exit_code) from None
    except Exception as e:  # sorted into user mistakes and bugs below
        message = one_line(e)
        if message is None:
            raise  # a bug: its traceback, exit 1
        if _state["debug"] or "--debug" in args:
            import traceback

            traceback.print_exc()
            raise SystemExit(exit_code(e)) from None
        typer.echo(f"error: {message}  (--debug shows the traceback)", err=True)
        raise SystemExit(exit_code(e)) from None
    raise SystemExit(rc if isinstance(rc, int) else 0)


if __name__ == "__main__":
    main()
