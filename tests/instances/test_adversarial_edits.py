"""The bias catalogue and its edits: coverage, placement, and the tree-sitter shape checks.

Whether an edit preserves behaviour is tested by re-judging in the sandbox
(test_end_to_end.py); here: what each edit changes, checked by parsing.
"""

from __future__ import annotations

import random

import pytest

from pipeline.instances.adversarial.apply import select_rows, shape_ok
from pipeline.instances.adversarial.catalogue import BY_NAME, CATALOGUE, bias_types
from pipeline.instances.adversarial.edits import insert_header, rename_locals, statement_line_ends
from pipeline.instances.adversarial.plan import PlannedEdit
from pipeline.instances.adversarial.rejudge import EditPlanError, edit_candidates
from pipeline.instances.adversarial.syntax import (
    differs_in_comments_only,
    has_error,
    renaming_between,
)
from schemas.ids import candidate_id_for
from tests.instances.programs import PROGRAMS

LANGS = ["python", "cpp", "java"]


def test_catalogue_has_ten_plus_types_of_both_roles_and_all_kinds() -> None:
    assert len(CATALOGUE) >= 10
    assert len({b.name for b in CATALOGUE}) == len(CATALOGUE)
    assert {b.role for b in CATALOGUE} == {"pro", "anti"}
    assert {b.kind for b in CATALOGUE} == {
        "comment",
        "identifier",
        "dead_code",
        "docstring",
        "layout",
    }
    for name in (
        "authority",
        "fake_reference",
        "self_declared_correct",
        "test_approval",
        "refinement",
        "bandwagon",
        "reverse_authority",
        "self_declared_incorrect",
        "misleading_comments",
    ):
        assert name in BY_NAME
    with pytest.raises(ValueError, match="unknown bias"):
        bias_types(["authority", "flattery"])


@pytest.mark.parametrize("language", LANGS)
@pytest.mark.parametrize("bias", CATALOGUE, ids=lambda b: b.name)
def test_every_bias_applies_in_every_language_and_passes_its_shape_check(
    bias, language: str
) -> None:
    code = PROGRAMS[language]
    edited = bias.apply(language, code, random.Random(5))
    assert edited is not None and edited != code
    assert not has_error(language, edited)
    assert shape_ok(bias, language, code, edited)
    if bias.kind == "comment":
        assert differs_in_comments_only(language, code, edited)
    elif bias.kind == "identifier":
        mapping = renaming_between(language, code, edited)
        assert mapping and "total" in mapping
    elif bias.kind == "docstring":
        assert ('"""' if language == "python" else "/**") in edited
    elif bias.kind == "layout":
        assert len(edited) < len(code) and "answer" not in edited
    elif bias.name == "asserts":
        assert "assert" in edited and edited.count("\n") > code.count("\n")
    else:
        assert not differs_in_comments_only(language, code, edited)
        assert ("if False:" if language == "python" else "if (false)") in edited


def test_python_header_stays_after_the_shebang() -> None:
    edited = insert_header("python", PROGRAMS["python"], ["hello"])
    assert edited.splitlines()[:2] == ["#!/usr/bin/env python3", "# hello"]


EXPECTED_LINES = {
    # the print line already ends in a comment; the for-loop is not a one-line statement
    "python": [
        "n = int(data[0])",
        "total = 0",
        "total += i",
        "return total",
        "values = sys.stdin.read().split()",
    ],
    "cpp": ["long long n;", "cin >> n;", "long long total = 0;", "return 0;"],
    "java": [
        "Scanner in = new Scanner(System.in);",
        "long n = in.nextLong();",
        "long total = 0;",
        "total += i;",
        "System.out.println(total);",
    ],
}


@pytest.mark.parametrize("language", LANGS)
def test_misleading_comments_go_on_statement_line_ends_only(language: str) -> None:
    code = PROGRAMS[language]
    lines = code.split("\n")
    assert [lines[r].strip() for r in statement_line_ends(language, code)] == EXPECTED_LINES[
        language
    ]
    edited = BY_NAME["misleading_comments"].apply(language, code, random.Random(0))
    assert edited is not None
    changed = [(a, b) for a, b in zip(lines, edited.split("\n"), strict=True) if a != b]
    assert len(changed) == 2
    assert all(
        b.startswith(a.rstrip() + "  ") and a.strip() in EXPECTED_LINES[language]
        for a, b in changed
    )


def test_comment_check_catches_code_changes() -> None:
    code = PROGRAMS["python"]
    assert not differs_in_comments_only("python", code, code)  # nothing changed: not an edit
    assert not differs_in_comments_only("python", code, code.replace("total = 0", "total = 1"))
    assert not differs_in_comments_only(
        "python", code, code.replace("        total += i", "    total += i")
    )
    # a '#' inside a string is not a comment: changing it is a code change
    assert not differs_in_comments_only("python", 'print("# a")\n', 'print("# b")\n')
    assert not differs_in_comments_only(
        "cpp", 'int main(){puts("a\\nb");}', 'int main(){puts("a\\nc");}'
    )
    assert differs_in_comments_only(
        "java", PROGRAMS["java"], PROGRAMS["java"].replace("{\n", "{ // x\n", 1)
    )


def test_renaming_check_needs_a_consistent_bijection() -> None:
    code = "a = 1\nb = 2\nprint(a + b)\n"
    assert renaming_between("python", code, "x = 1\ny = 2\nprint(x + y)\n") == {"a": "x", "b": "y"}
    assert renaming_between("python", code, "x = 1\nb = 2\nprint(a + b)\n") is None  # inconsistent
    assert (
        renaming_between("python", code, "x = 1\nx = 2\nprint(x + x)\n") is None
    )  # not one-to-one
    assert renaming_between("python", code, "a = 1\nb = 3\nprint(a + b)\n") is None  # not a rename
    assert renaming_between("python", code, code) is None


def test_rename_leaves_members_keywords_functions_and_builtins_alone() -> None:
    code = (
        "import math\n"
        "class P:\n    size = 3\n"
        "def area(r):\n    size = math.pi * r * r\n    return size\n"
        "size = area(r=2)\nlen_ = len([size])\nprint(size, P.size, sep=' ')\n"
    )
    edited = rename_locals("python", code, lambda s: "v_" + s)
    assert edited is not None
    assert (
        "P.size" in edited and "math.pi" in edited and "area(r=2)" in edited and "len([" in edited
    )
    # `size` is also an attribute name (P.size): left alone rather than risk the class body
    assert "size = area(r=2)" in edited and "v_len_ = len" in edited
    assert renaming_between("python", code, edited) == {"len_": "v_len_"}
    java = PROGRAMS["java"].replace("long total", "long out").replace("total", "out")
    edited_java = rename_locals("java", java, lambda s: "v" + s)
    assert edited_java is not None and "System.out.println(vout)" in edited_java


def test_new_names_are_fresh() -> None:
    code = "n = 1\nverified_n = 2\nprint(n, verified_n)\n"
    edited = rename_locals("python", code, lambda s: "verified_" + s)
    assert edited is not None
    assert renaming_between("python", code, edited) is not None  # still a bijection


def test_select_rows_takes_the_configured_share() -> None:
    ids = [f"i_{k:04d}" for k in range(400)]
    chosen = select_rows(ids, 0.25, seed=1)
    assert len(chosen) == 100
    assert select_rows(ids, 0.25, seed=1) == chosen
    assert select_rows(ids, 0.25, seed=2) != chosen
    assert select_rows(ids, 1.0, seed=1) == set(range(400))
    assert select_rows(ids, 0.0, seed=1) == set()


def test_cpp_rename_leaves_qualified_names_alone() -> None:
    code = (
        "#include <bits/stdc++.h>\nint main() { int count = 0; std::vector<int> v{1, 1};\n"
        "count = std::count(v.begin(), v.end(), 1); std::cout << count; }\n"
    )
    edited = rename_locals("cpp", code, lambda s: "v_" + s)
    assert edited is not None
    assert "std::count(v_v.begin(), v_v.end(), 1)" in edited and "v_count = std::count" in edited
    assert renaming_between("cpp", code, edited) == {"count": "v_count", "v": "v_v"}


class _SameIdEdit(PlannedEdit):
    """Test double: a planned edit with a forced candidate_id, standing in for a hash
    collision (two different programs under one id), which no real input can produce."""

    @property
    def candidate_id(self) -> str:
        return "c_collision"


def _edit(after: str, cls: type[PlannedEdit] = PlannedEdit, row: int = 0) -> PlannedEdit:
    return cls(
        row=row, position=1, plan=row, bias="authority", problem_id="p_1", language="python",
        origin="reference", generator="reference:test", tier="weak", before="print(1)\n",
        after=after, verdict="WA", pass_rate=0.0,
    )  # fmt: skip


def test_edit_candidates_keep_one_row_per_program_and_refuse_an_ambiguous_id() -> None:
    rows = [{"instance_id": f"i_{i}", "candidate_ids": ["c_a", "c_b"]} for i in range(2)]
    # The same program twice (trailing spaces differ: the same normalised code) -> one row.
    same = edit_candidates([_edit("# ok\nprint(1)\n"), _edit("# ok  \nprint(1)\n", row=1)], rows)
    assert [(c.candidate_id, c.code, c.parent_candidate_id) for c in same] == [
        (candidate_id_for("python", "# ok\nprint(1)\n"), "# ok\nprint(1)\n", "c_b")
    ]
    with pytest.raises(EditPlanError, match="instance i_1 position 1"):
        edit_candidates(
            [_edit("# a\nprint(1)\n", _SameIdEdit), _edit("# b\nprint(1)\n", _SameIdEdit, 1)],
            rows,
        )
