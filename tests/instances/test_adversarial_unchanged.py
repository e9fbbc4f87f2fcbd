"""Which bias edits are proven to leave a program unchanged (no re-judge needed), and which
must still be judged: written-out programs, each case decided by hand."""

from __future__ import annotations

import pytest

from pipeline.instances.adversarial.apply import Outcome, apply_edits, carries_verdict
from pipeline.instances.adversarial.config import AdversarialConfig
from pipeline.instances.adversarial.plan import plan_per_row
from pipeline.instances.adversarial.unchanged import provably_unchanged

PY = "n = int(input())\nprint(n * 2)\n"
CPP = '#include <cstdio>\nint main() {\n    int n;\n    scanf("%d", &n);\n    printf("%d\\n", n * 2);\n}\n'
JAVA = (
    "import java.util.*;\npublic class Main {\n    public static void main(String[] a) {\n"
    "        Scanner s = new Scanner(System.in);\n        System.out.println(s.nextInt() * 2);\n"
    "    }\n}\n"
)


@pytest.mark.parametrize(
    ("language", "before", "after"),
    [
        ("python", PY, "# Written by a senior engineer.\n" + PY),  # header comment
        ("python", PY, "n = int(input())  # read n\nprint(n * 2)\n"),  # end-of-line comment
        (
            "python",
            "import sys\nprint(open(0).read())\n",
            "# ok\nimport sys\nprint(open(0).read())\n",
        ),
        ("cpp", CPP, "// Verified against every test.\n" + CPP),
        ("cpp", CPP, CPP.replace('scanf("%d", &n);', 'scanf("%d", &n); /* read */')),
        ("cpp", CPP, CPP.replace("\n    ", "\n")),  # layout only: indentation is not syntax
        ("java", JAVA, "// Reviewed.\n" + JAVA),
    ],
)
def test_comment_and_layout_edits_are_proven_unchanged(
    language: str, before: str, after: str
) -> None:
    assert provably_unchanged(language, before, after)


@pytest.mark.parametrize(
    ("language", "before", "after", "why"),
    [
        ("python", PY, "# x\n" + PY.replace("2", "3"), "the code changed"),
        ("python", PY, '"""Doubles n."""\n' + PY, "a docstring is a statement"),
        ("python", PY, "m = int(input())\nprint(m * 2)\n", "a rename changes the tree"),
        (
            "python",
            "import inspect\nprint(inspect.currentframe().f_lineno)\n",
            "# header\nimport inspect\nprint(inspect.currentframe().f_lineno)\n",
            "it prints its own line number",
        ),
        (
            "python",
            "import sys\nprint(sys._getframe().f_lineno)\n",
            "# header\nimport sys\nprint(sys._getframe().f_lineno)\n",
            "frame introspection through sys",
        ),
        (
            "python",
            "print(len(open('main.py').read()))\n",
            "# header\nprint(len(open('main.py').read()))\n",
            "it can read its own source by name",
        ),
        (
            "python",
            "print(len(open(__file__).read()))\n",
            "# header\nprint(len(open(__file__).read()))\n",
            "it can read its own source by __file__",
        ),
        ("python", "x = eval('1')\nprint(x)\n", "# h\nx = eval('1')\nprint(x)\n", "eval"),
        ("python", PY, "# -*- coding: latin-1 -*-\n" + PY, "a coding line changes decoding"),
        ("python", "print(1\n", "# h\nprint(1\n", "not a program Python parses"),
        (
            "cpp",
            '#include <cstdio>\nint main() { printf("%d\\n", __LINE__); }\n',
            '// header\n#include <cstdio>\nint main() { printf("%d\\n", __LINE__); }\n',
            "__LINE__",
        ),
        (
            "cpp",
            CPP,
            CPP.replace('scanf("%d", &n);', 'scanf("%d", &n); // read \\'),
            "a line splice pulls the next line into the comment",
        ),
        (
            "cpp",
            '#include <fstream>\nint main() { std::ifstream f("main.cpp"); }\n',
            '// h\n#include <fstream>\nint main() { std::ifstream f("main.cpp"); }\n',
            "it can read its own source",
        ),
        ("cpp", CPP, CPP.replace("n * 2", "n * 3"), "the code changed"),
        ("java", JAVA, "// a \\u000a comment\n" + JAVA, "javac decodes \\u before comments"),
        (
            "java",
            JAVA.replace("s.nextInt() * 2", "new Throwable().getStackTrace()[0].getLineNumber()"),
            "// h\n"
            + JAVA.replace("s.nextInt() * 2", "new Throwable().getStackTrace()[0].getLineNumber()"),
            "it prints its own line number",
        ),
    ],
)
def test_edits_that_are_not_proven_go_to_the_judge(
    language: str, before: str, after: str, why: str
) -> None:
    assert not provably_unchanged(language, before, after), why


def _row(code: str, wrong: str) -> dict:
    from schemas.ids import candidate_id_for

    return {
        "instance_id": "i1",
        "problem_id": "p1",
        "num_candidates": 2,
        "chosen_position": 0,
        "candidates": [code, wrong],
        "candidate_ids": [candidate_id_for("python", code), candidate_id_for("python", wrong)],
        "candidate_languages": ["python", "python"],
        "candidate_origins": ["reference", "mutant"],
        "candidate_generators": ["reference:x", "mutant:x"],
        "weak_strong": "weak",
        "verdicts": ["AC", "WA"],
        "pass_rates": [1.0, 0.5],
        "adversarial": [None, None],
        "split": "heldout",
        "build_id": None,
    }


def test_proven_edits_skip_the_rejudge_and_keep_their_verdict() -> None:
    """Two rows: one of plain programs (every comment edit proven: nothing reaches the
    re-judge), one whose programs print their line number (every edit goes to it)."""
    plain = _row(PY, PY.replace("2", "3"))
    introspective = _row(
        "import inspect\nprint(inspect.currentframe().f_lineno)\n",
        "import inspect\nprint(inspect.currentframe().f_lineno + 1)\n",
    )
    introspective["instance_id"] = "i2"
    cfg = AdversarialConfig(bias_types=["authority", "reverse_authority"])
    asked: list[str] = []

    def rejudge(edits: list) -> list[Outcome | None]:
        asked.extend(e.after for e in edits)
        return [Outcome(e.verdict, e.pass_rate) for e in edits]

    rows, stats = apply_edits([plain, introspective], cfg, rejudge)
    plans, _, _ = plan_per_row([plain, introspective], cfg)
    edits = [e for p in plans for e in p.edits]
    assert len(edits) == 4  # authority on each row's wrong one, reverse_authority on its right one
    assert [carries_verdict(e, cfg) for e in edits] == [True, True, False, False]
    assert asked == [e.after for e in edits if e.row == 1]  # only the introspective row's
    assert stats["edits_carried_unchanged"] == 2
    assert stats["by_bias"]["authority"]["carried_unchanged"] == 1
    assert stats["edits_accepted"] == 4 and len(rows) == 4

    asked.clear()  # rejudge_unchanged: every edit judged, the same rows
    every = cfg.model_copy(update={"rejudge_unchanged": True})
    rows_all, stats_all = apply_edits([plain, introspective], every, rejudge)
    assert len(asked) == 4 and stats_all["edits_carried_unchanged"] == 0
    assert rows_all == rows
