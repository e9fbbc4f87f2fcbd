"""The `mbpp` source on rows in MBPP's exact shapes (original JSONL / Hub `full`, and `sanitized`),
through the real ingest stage; the reference check in the real sandbox; mbpp as a decontamination
benchmark. The real MBPP file is not on this machine: these rows are written here in its shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.problems.adapters.mbpp import entry_point, load_mbpp_rows, mbpp_split
from pipeline.problems.config import IngestConfig
from pipeline.problems.errors import RowError, SourceError
from pipeline.problems.stage import ingest, output_paths
from pipeline.splits.decontam import BenchmarkError, read_benchmark_statements, resolve_benchmark
from schemas.problem import Problem
from schemas.tables import table_to_models

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "mbpp_demo" / "mbpp_demo.jsonl"

# MBPP's original / `full` shape: text, code, task_id, test_setup_code, test_list, challenge_test_list.
FULL_ROWS = [
    {
        "text": "Write a function to find the shared elements of two lists.",
        "code": "def shared(a, b):\n    return tuple(set(a) & set(b))\n",
        "task_id": 12,
        "test_setup_code": "",
        "test_list": [
            "assert set(shared([1, 2], [2, 3])) == set((2,))",
            "assert set(shared([4], [5])) == set()",
        ],
        "challenge_test_list": ["assert shared([], []) == ()"],
    },
    {
        "text": "Write a function to compute a power of two.",
        "code": "def pow2(n):\n    return 2 ** n\n",
        "task_id": 700,
        "test_setup_code": "import math",
        "test_list": ["assert math.log2(pow2(5)) == 5"],
        "challenge_test_list": [],
    },
    {
        "text": "An example task.",
        "code": "def one():\n    return 1\n",
        "task_id": 3,
        "test_setup_code": "",
        "test_list": ["assert one() == 1"],
        "challenge_test_list": [],
    },
    {
        "text": "A validation task.",
        "code": "def two():\n    return 2\n",
        "task_id": 555,
        "test_setup_code": "",
        "test_list": ["assert two() == 2"],
        "challenge_test_list": [],
    },
    # bad rows: quarantined with the field and the reason, never dropped
    {
        "text": "No asserts at all.",
        "code": "def f():\n    pass\n",
        "task_id": 13,
        "test_setup_code": "",
        "test_list": [],
        "challenge_test_list": [],
    },
    {
        "text": "Outside MBPP's ids.",
        "code": "def g():\n    pass\n",
        "task_id": 1200,
        "test_setup_code": "",
        "test_list": ["assert g() is None"],
        "challenge_test_list": [],
    },
    {
        "text": "",
        "code": "def h():\n    pass\n",
        "task_id": 14,
        "test_setup_code": "",
        "test_list": ["assert h() is None"],
        "challenge_test_list": [],
    },
]
# The `sanitized` config's shape: prompt instead of text, test_imports (a list) instead of test_setup_code.
SANITIZED_ROW = {
    "source_file": "Benchmark Questions Verification V2.ipynb",
    "task_id": 620,
    "prompt": "Write a function that returns the square root of a number.",
    "code": "import math\ndef root(x):\n    return math.sqrt(x)\n",
    "test_imports": ["import math"],
    "test_list": ["assert math.isclose(root(4), 2)"],
}


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _ingest(spec: str, tmp_path: Path) -> tuple[dict[str, Problem], dict[str, dict]]:
    out = tmp_path / "out" / "problems.parquet"
    ingest([spec], out, IngestConfig(), show_progress=False)
    problems = {p.source_id: p for p in table_to_models(pq.read_table(out), Problem)}
    quarantine = {
        q["source_row_id"]: q for q in pq.read_table(output_paths(out)["quarantine"]).to_pylist()
    }
    return problems, quarantine


def test_split_boundaries() -> None:
    assert [mbpp_split(i) for i in (1, 10, 11, 510, 511, 600, 601, 974)] == [
        "prompt",
        "prompt",
        "test",
        "test",
        "validation",
        "validation",
        "train",
        "train",
    ]
    with pytest.raises(RowError, match="outside"):
        mbpp_split(975)


def test_entry_point_is_the_function_the_reference_defines() -> None:
    assert entry_point(["assert set(shared([1], [1])) == {1}"], "def shared(a, b): ...") == "shared"
    assert (
        entry_point(["assert len(foo(3)) == 3"], "") == "foo"
    )  # no reference: first non-builtin call
    with pytest.raises(RowError, match="entry point"):
        entry_point(["assert 1 == 1"], "")


def test_full_shape_ingests_with_splits_tests_and_prompt(tmp_path: Path) -> None:
    problems, quarantine = _ingest(f"mbpp:{_write(tmp_path / 'mbpp.jsonl', FULL_ROWS)}", tmp_path)
    assert {k: p.source_split for k, p in problems.items()} == {
        "12": "test",
        "700": "train",
        "3": "prompt",
        "555": "validation",
    }
    p = problems["12"]
    assert (p.source, p.test_mode, p.entry_point) == ("mbpp", "function", "shared")
    assert [t.code for t in p.tests] == [
        t + "\n" for t in FULL_ROWS[0]["test_list"]
    ]  # challenge: off by default
    assert (
        "shared elements" in p.prompt_statement
        and FULL_ROWS[0]["test_list"][0] in p.prompt_statement
    )
    assert FULL_ROWS[0]["test_list"][1] not in p.prompt_statement  # only the first assert is shown
    assert (
        problems["700"].tests[0].code == "import math\nassert math.log2(pow2(5)) == 5\n"
    )  # setup first
    assert problems["700"].solutions[0].code == FULL_ROWS[1]["code"]
    assert {k: (q["field"], q["reason"]) for k, q in quarantine.items()} == {
        "13": ("test_list", "no asserts"),
        "1200": ("task_id", "task_id 1200 is outside MBPP's 1..974"),
        "14": ("text", "empty task text (neither `text` nor `prompt` is set)"),
    }


def test_function_mode_tests_pass_the_reference_and_fail_a_wrong_program(tmp_path: Path) -> None:
    problems, _ = _ingest(f"mbpp:{_write(tmp_path / 'mbpp.jsonl', FULL_ROWS)}", tmp_path)
    p = problems["700"]

    def run(
        candidate: str,
    ) -> int:  # our own trusted programs, so a plain subprocess is enough here
        return subprocess.run(
            [sys.executable, "-c", candidate + "\n" + p.tests[0].code],
            check=False,
            capture_output=True,
            timeout=30,
        ).returncode

    assert run(p.solutions[0].code) == 0
    assert run("def pow2(n):\n    return n * 2\n") != 0


def test_sanitized_shape_and_split_filter(tmp_path: Path) -> None:
    path = _write(tmp_path / "sanitized.jsonl", [SANITIZED_ROW, FULL_ROWS[0]])
    problems, _ = _ingest(f"mbpp:{path}#train", tmp_path)
    assert list(problems) == ["620"]  # #train keeps the train split only
    p = problems["620"]
    assert (
        p.entry_point == "root"
        and p.tests[0].code == "import math\nassert math.isclose(root(4), 2)\n"
    )
    assert [r["task_id"] for r in load_mbpp_rows(str(path), "test")] == [12]
    with pytest.raises(SourceError, match="unknown MBPP split"):
        load_mbpp_rows(str(path), "dev")


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no MBPP file"):
        ingest(
            [f"mbpp:{tmp_path / 'nope.jsonl'}"],
            tmp_path / "p.parquet",
            IngestConfig(),
            show_progress=False,
        )


def test_mbpp_spec_is_a_decontamination_benchmark(tmp_path: Path) -> None:
    path = _write(tmp_path / "mbpp.jsonl", FULL_ROWS[:4])
    bench = resolve_benchmark(f"mbpp:{path}", tmp_path / "bench")  # default split: test
    assert read_benchmark_statements(bench) == [FULL_ROWS[0]["text"]]
    train = resolve_benchmark(f"mbpp:{path}#train", tmp_path / "bench")
    assert read_benchmark_statements(train) == [FULL_ROWS[1]["text"]]
    assert resolve_benchmark(str(path), tmp_path) == path  # a plain file stays a file
    with pytest.raises(BenchmarkError, match="task text"):
        resolve_benchmark(
            f"mbpp:{_write(tmp_path / 'bad.jsonl', [{**FULL_ROWS[0], 'text': ''}])}", tmp_path
        )


def test_split_stage_drops_train_problems_that_copy_mbpp_test(tmp_path: Path) -> None:
    from pipeline.splits.config import SplitConfig
    from pipeline.splits.stage import split_problems

    bench = _write(
        tmp_path / "mbpp.jsonl",
        [
            {
                **FULL_ROWS[0],
                "text": (
                    "Write a python function to count the number of rotations required to generate a sorted array."
                ),
            }
        ],
    )
    problems = tmp_path / "p" / "problems.parquet"
    ingest(
        [f"jsonl:{_write(tmp_path / 'ours.jsonl', [_native(1, bench_text=True), _native(2)])}"],
        problems,
        IngestConfig(),
        show_progress=False,
    )
    report = split_problems(
        problems,
        tmp_path / "splits",
        SplitConfig(benchmarks=[f"mbpp:{bench}"], heldout_fraction=0.0),
        show_progress=False,
    )
    assigned = {
        r["problem_id"]: (r["split"], r["reason"])
        for r in pq.read_table(tmp_path / "splits" / "assignments.parquet").to_pylist()
    }
    dropped = [v for v in assigned.values() if v[0] == "dropped"]
    assert len(dropped) == 1 and "benchmark overlap" in dropped[0][1], report


def _native(i: int, bench_text: bool = False) -> dict:
    statement = (
        "Given an array, write a python function to count the number of rotations required to "
        "generate a sorted array, and print it."
        if bench_text
        else f"Read two integers and print their sum number {i} in a friendly way for everyone."
    )
    return {
        "source": "ours",
        "source_id": str(i),
        "statement": statement,
        "test_mode": "stdio",
        "tests": [{"input": "1 2\n", "output": "3\n"}],
    }


@pytest.mark.docker
def test_reference_check_quarantines_the_wrong_reference(
    tmp_path: Path, sandbox_client: object
) -> None:
    """The demo set's task 17 has a wrong reference on purpose; the other 15 pass in the real sandbox."""
    from pipeline.problems.reference_check import check_references

    problems = tmp_path / "problems.parquet"
    ingest([f"mbpp:{DEMO}"], problems, IngestConfig(), show_progress=False)
    report = check_references(problems, tmp_path / "check", client=sandbox_client, progress=False)
    assert (report["with_reference"], report["reference_pass"]) == (16, 15)
    assert report["verdicts"] == {"AC": 15, "WA": 1}
    [q] = report["quarantined"]
    assert (
        q["source_id"] == "17" and "verdict WA" in q["reason"] and "AssertionError" in q["reason"]
    )
    kept = table_to_models(pq.read_table(tmp_path / "check" / "problems.verified.parquet"), Problem)
    assert len(kept) == 15 and "17" not in {p.source_id for p in kept}
    assert pq.read_table(tmp_path / "check" / "problems.verified.quarantine.parquet").num_rows == 1


def test_malformed_mbpp_line_is_quarantined_and_the_rest_ingested(tmp_path: Path) -> None:
    """MBPP files are JSON lines too: one bad line costs that line (file, line number,
    reason in the quarantine, counted in the report), not the source."""
    path = tmp_path / "mbpp.jsonl"
    good = [json.dumps(FULL_ROWS[0]), json.dumps(FULL_ROWS[1])]
    path.write_text(good[0] + "\n" + good[1][:30] + "\n" + good[1] + "\n")
    out = tmp_path / "out" / "problems.parquet"
    stats = ingest([f"mbpp:{path}"], out, IngestConfig(), show_progress=False)
    problems = {p.source_id for p in table_to_models(pq.read_table(out), Problem)}
    quarantine = {
        q["source_row_id"]: q for q in pq.read_table(output_paths(out)["quarantine"]).to_pylist()
    }
    assert sorted(problems) == ["12", "700"]
    assert list(quarantine) == [f"{path}:2"]
    assert quarantine[f"{path}:2"]["reason"].startswith(
        f"malformed JSON line 2 of {path}: not valid JSON"
    )
    assert (
        stats["malformed_lines"] == 1
        and stats["per_source"][f"mbpp:{path}"]["malformed_lines"] == 1
    )
    # As a decontamination benchmark a partly unreadable file is still refused: skipping a
    # line there would silently weaken the check.
    with pytest.raises(SourceError, match="line 2"):
        load_mbpp_rows(str(path), "test")
