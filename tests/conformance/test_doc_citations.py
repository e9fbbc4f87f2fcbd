"""docs/aletheia-conformance.md names, for every row, the test that checks it: every test it
cites must exist, and every row must cite one.

The doc cites a test as `path/test_file.py::test_name` (a path under tests/, or a file name
that one file under tests/ has), as `test_file.py::test_name[params]`, or as `::test_name`,
which continues a file cited before it (the latest one that defines it); a name with `*`
(`test_p3_*`) cites a family, of which the file must define at least one. Each cited function
must be defined in its file (at module level or in a class). A row whose test cell starts
with "same test" shares the row above's.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "aletheia-conformance.md"
TESTS = REPO / "tests"

# A citation inside backticks: an optional test file, then `::test_name` and optional [params].
CITATION = re.compile(
    r"`(?P<file>(?:[\w./-]*/)?test_\w+\.py)?(?:::(?P<test>test_[\w*]+)(?:\[[^\]`]*\])?)?`"
)
# Anything in backticks that looks like a test citation (it holds `::`).
LOOKS_CITED = re.compile(r"`[^`\n]*::[^`\n]*`")


@cache
def _defined(path: Path) -> frozenset[str]:
    """The test functions a file defines, at module level or in a class."""
    tree = ast.parse(path.read_text())
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        names |= {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    return frozenset(names)


def resolve(name: str) -> Path | None:
    """A cited test file: a path from the repository root or tests/, or a file name that
    exactly one file under tests/ has."""
    for base in (REPO, TESTS):
        if (base / name).is_file():
            return base / name
    found = [p for p in TESTS.rglob(Path(name).name) if p.is_file()]
    return found[0] if len(found) == 1 else None


def citations(text: str) -> list[tuple[int, list[str], str | None]]:
    """(line, files, test or None) for every citation: its own file, or for `::test` every
    file cited before it, the latest first."""
    out: list[tuple[int, list[str], str | None]] = []
    before: list[str] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for m in CITATION.finditer(line):
            file, test = m.group("file"), m.group("test")
            if not file and not test:
                continue
            if file:
                before = [file] + [f for f in before if f != file]
            if not before:
                raise AssertionError(f"line {lineno}: `::{test}` before any test file")
            out.append((lineno, [file] if file else list(before), test))
    return out


def test_the_parser_reads_each_form() -> None:
    text = (
        "| a | `tests/x/test_a.py::test_one`, `::test_two[p-1]` |\n"
        "| b | `test_b.py` (schema); `::test_three` |\n"
        "| c | `test_c.py::test_four[x]`, `parse_answer` |\n"
    )
    a, b = "tests/x/test_a.py", "test_b.py"
    assert citations(text) == [
        (1, [a], "test_one"),
        (1, [a], "test_two"),
        (2, [b], None),
        (2, [b, a], "test_three"),
        (3, ["test_c.py"], "test_four"),
    ]


def test_every_test_the_conformance_doc_cites_exists() -> None:
    missing = []
    for lineno, files, test in citations(DOC.read_text()):
        paths = [resolve(f) for f in files]
        if paths[0] is None:
            missing.append(f"line {lineno}: no test file {files[0]}")
        elif test is not None and not any(p and fnmatch.filter(_defined(p), test) for p in paths):
            where = paths[0].relative_to(REPO) if len(paths) == 1 else "no file cited before"
            missing.append(f"line {lineno}: {where} has no {test}")
    assert not missing, "\n".join(missing)


def test_every_citation_in_the_doc_is_read() -> None:
    """A citation the parser cannot read (`::test_x_...`) would never be checked."""
    text = DOC.read_text()
    unread = [
        f"line {text[: m.start()].count(chr(10)) + 1}: {m.group(0)}"
        for m in LOOKS_CITED.finditer(text)
        if not CITATION.fullmatch(m.group(0))
    ]
    assert not unread, "citations the parser cannot read:\n" + "\n".join(unread)


def _rows(text: str) -> list[tuple[int, list[str]]]:
    """(line, cells) of every table row that is not a header or a rule."""
    rows = []
    header = False
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.startswith("|"):
            header = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not header:  # a table's first line is its header
            header = True
            continue
        if set("".join(cells)) <= set("-: "):
            continue
        rows.append((lineno, cells))
    return rows


@pytest.mark.parametrize("doc", [DOC], ids=["aletheia-conformance"])
def test_every_row_cites_a_test(doc: Path) -> None:
    """Each row's last cell names a test (a `::test_...` citation or a test file), or says
    "same test" under a row that does."""
    bare = []
    previous = False
    for lineno, cells in _rows(doc.read_text()):
        last = cells[-1]
        cites = bool(re.search(r"test_\w+", last)) or (last.startswith("same test") and previous)
        if not cites:
            bare.append(f"line {lineno}: {cells[0][:40]!r}: {last[:60]!r}")
        previous = cites
    assert not bare, "rows without a test:\n" + "\n".join(bare)


def test_the_row_check_catches_a_row_without_a_test(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "| # | ours | test |\n| --- | --- | --- |\n"
        "| A | x | `test_zoo.py::test_the_grid_is_exactly_the_hand_table` |\n"
        "| B | y | same test |\n| C | z | none |\n"
    )
    with pytest.raises(AssertionError, match=r"line 5: 'C': 'none'"):
        test_every_row_cites_a_test(doc)
