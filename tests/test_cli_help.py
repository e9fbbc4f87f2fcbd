"""Every `--help` of `aletheia <cmd>` and `python -m sandbox <cmd>` shows its text whole.

Typer renders help through rich markup, which silently drops anything that looks like a
style tag (`[mode, ...]`, `[#SPLIT]`): `sandbox judge --help` once read "Input rows carry
language, source, tests, ; other ...". So each help page is rendered (wide, so nothing
wraps) and checked three ways: every word of every declared help text is on the page, no
declared text stops mid-phrase, and no rendered line has the marks of a dropped part.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import typer.rich_utils
from typer import _click as click
from typer.main import get_command
from typer.testing import CliRunner

from pipeline.cli import COMMANDS, app, load_command
from sandbox.cli import app as sandbox_app

# An ending that leaves the phrase open ("adds to the config's", "tests, ;").
DANGLING = re.compile(
    r"(?:[,;:(\[]|\b(?:the|a|an|of|to|and|or|with|for|in|by|from|\w+'s))\s*$", re.IGNORECASE
)
# What a dropped part leaves on a rendered line: a comma before ; . ) or a comma, empty brackets.
GAP = re.compile(r",\s*(?:[;)]|\.(?!\.\.))|,\s*,|\(\s*\)|\[\s*\]|`\s*`")  # ", ..." is fine
PAIRS = {"(": ")", "[": "]", "{": "}"}


def _walk(root: typer.Typer | None, prefix: list[str], cmd: click.Command) -> Iterator[tuple]:
    yield (root, prefix, cmd)
    if hasattr(cmd, "list_commands"):  # a group (typer ships its own click)
        ctx = click.Context(cmd)
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None:
                yield from _walk(root, [*prefix, name], sub)


def _all_commands() -> list[tuple]:
    found = []
    for name in COMMANDS:
        cmd = load_command(name)
        assert cmd is not None, name
        found += list(_walk(app, [name], cmd))
    found += list(_walk(sandbox_app, [], get_command(sandbox_app)))
    return found


ALL = _all_commands()
IDS = [("sandbox " if root is sandbox_app else "aletheia ") + " ".join(p) for root, p, _ in ALL]


def _declared(cmd: click.Command) -> list[tuple[str, str]]:
    """(where, text) for the command's own help and each of its parameters' help."""
    out = [("docstring", cmd.help or "")] if cmd.help else []
    out += [(f"--{p.name}", p.help) for p in cmd.params if getattr(p, "help", None)]
    return out


def _balanced(text: str) -> bool:
    stack: list[str] = []
    for ch in text:
        if ch in PAIRS:
            stack.append(PAIRS[ch])
        elif ch in PAIRS.values() and (not stack or stack.pop() != ch):
            return False
    return not stack and text.count("`") % 2 == 0


def _words(text: str) -> list[str]:
    # A rich escape `\[` renders as `[`; the rest of the text should appear as written.
    return text.replace("\\[", "[").split()


@pytest.mark.parametrize(("root", "prefix", "cmd"), ALL, ids=IDS)
def test_help_text_is_whole(
    root: typer.Typer, prefix: list[str], cmd: click.Command, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", 2000)  # one line per paragraph
    result = CliRunner().invoke(root, [*prefix, "--help"])
    assert result.exit_code == 0, result.output
    page = " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())
    for where, text in _declared(cmd):
        assert _balanced(text), f"{where}: unbalanced brackets or backticks in {text!r}"
        first_paragraph = text.split("\n\n")[0]
        assert not DANGLING.search(first_paragraph.replace("\\[", "[")), (
            f"{where}: ends mid-phrase: {text!r}"
        )
        missing = [w for w in _words(text) if w not in page]
        assert not missing, f"{where}: {missing} dropped from the rendered help: {text!r}"
    for line in result.output.splitlines():
        assert not GAP.search(line), f"a dropped part on the line {line.strip()!r}"
        assert _balanced(line.replace("<build>", "")), f"unbalanced: {line.strip()!r}"


def test_the_checks_catch_what_rich_markup_drops(monkeypatch: pytest.MonkeyPatch) -> None:
    """The old `sandbox judge` docstring, rendered: the checks above must fail on it."""
    import typer

    bad = typer.Typer()

    @bad.command()
    def judge(x: int = typer.Option(0, help="adds to the config's")) -> None:
        """Input rows carry language, source, tests, [mode, time_limit_s]; other columns."""

    @bad.command()
    def other() -> None:
        """Two commands, so `judge` is a subcommand as in the sandbox CLI."""

    monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", 2000)
    out = CliRunner().invoke(bad, ["judge", "--help"]).output
    assert "tests, ; other" in out and GAP.search(out)
    page = " ".join(out.split())
    assert [w for w in _words(judge.__doc__ or "") if w not in page] == ["[mode,", "time_limit_s];"]
    assert DANGLING.search("judge model as NAME=PATH; adds to the config's")
    assert not DANGLING.search("use the host verdict cache")
