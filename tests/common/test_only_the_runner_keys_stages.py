"""Every stage is cached by the one runner: outside `pipeline/common`, no module of the
pipeline or the flows calls or imports the key and marker helpers (issue 24, after steps
B2-B8). Read from the syntax trees, so a comment or a docstring naming them does not count."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HELPERS = {"stage_key", "is_done", "mark_done"}


def _uses(path: Path) -> set[str]:
    """The helper names a module imports or calls (as a name or an attribute)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom):
            found |= {a.name for a in node.names} & HELPERS
        elif isinstance(node, ast.Name) and node.id in HELPERS:
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in HELPERS:
            found.add(node.attr)
    return found


def test_only_the_runner_keys_stages() -> None:
    common = REPO / "pipeline" / "common"
    offenders = {
        str(path.relative_to(REPO)): sorted(used)
        for root in (REPO / "pipeline", REPO / "flows")
        for path in sorted(root.rglob("*.py"))
        if common not in path.parents and (used := _uses(path))
    }
    assert offenders == {}, f"stage keys and markers outside the runner: {offenders}"


def test_the_scan_sees_a_call_and_an_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from pipeline.common.stage import is_done\n"
        "import pipeline.common.stage as s\n"
        "# stage_key in a comment is not a use\n"
        "s.mark_done(1)\n"
    )
    assert _uses(module) == {"is_done", "mark_done"}
