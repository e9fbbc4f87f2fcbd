"""Statement normalisation, the data-only unpickler, checker wrapping, limits, source specs."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from pipeline.problems.adapters.base import parse_memory_limit_mb, parse_time_limit
from pipeline.problems.checkers import wrap_score_or_exit_checker
from pipeline.problems.config import IngestConfig, NormalizeConfig
from pipeline.problems.errors import RowError, SourceError
from pipeline.problems.normalize import prompt_statement
from pipeline.problems.safe_pickle import UnsafePickleError, decode_b64_zlib_pickle, safe_loads
from pipeline.problems.sources import parse_spec
from pipeline.problems.stage import ingest

CF = """You are given n numbers.

Input
The first line contains n.

Output
Print the sum.

Examples
Input
3
1 2 3
Output
6

Note
In the first example 1+2+3=6."""

ATCODER = """Problem Statement
Takahashi has N apples.

Constraints
1 <= N <= 100

Input
Input is given from Standard Input.

Sample Input 1
3

Sample Output 1
6

Sample Input 2
1

Sample Output 2
2"""


def test_prompt_statement_cuts_sample_sections_only() -> None:
    cfg = NormalizeConfig()
    out = prompt_statement(CF, cfg)
    assert "Examples" not in out and "1 2 3" not in out
    assert out.startswith("You are given n numbers.") and "Print the sum." in out and "Note" in out
    at = prompt_statement(ATCODER, cfg)
    assert (
        "Sample" not in at and "Constraints\n1 <= N <= 100" in at and at.endswith("Standard Input.")
    )


def test_prompt_statement_options_and_whitespace() -> None:
    keep = prompt_statement(CF, NormalizeConfig(cut_sample_io=False))
    assert "Examples" in keep and "1 2 3" in keep
    messy = "Sum   two\tnumbers.  \n\n\n\n  def f(x):\n      return x"
    assert (
        prompt_statement(messy, NormalizeConfig())
        == "Sum two numbers.\n\n  def f(x):\n      return x"
    )
    # a statement that is nothing but samples is kept rather than emptied
    only = "Example 1:\nInput: 1\nOutput: 1"
    assert prompt_statement(only, NormalizeConfig()) == only


def test_safe_pickle_allows_data_and_refuses_code() -> None:
    data = {"a": [1, "x", None, 2.5, True]}
    assert safe_loads(pickle.dumps(data)) == data
    assert safe_loads(pickle.dumps(json.dumps(data))) == json.dumps(data)
    with pytest.raises(UnsafePickleError, match="posix.system|os.system"):
        import os

        class Evil:
            def __reduce__(self):
                return (os.system, ("true",))

        safe_loads(pickle.dumps(Evil()))
    with pytest.raises(UnsafePickleError, match="set"):  # sets need a class lookup
        safe_loads(pickle.dumps({1, 2}))
    with pytest.raises(UnsafePickleError, match="tuple"):
        safe_loads(pickle.dumps((1, 2)))
    with pytest.raises(ValueError, match="not zlib"):
        decode_b64_zlib_pickle("aGVsbG8=")
    import base64

    assert (
        decode_b64_zlib_pickle(base64.b64encode(zlib.compress(pickle.dumps("[]"))).decode()) == "[]"
    )


def _run_checker(source: str, actual: str, tmp_path: Path) -> int:
    files = []
    for name, text in (("in", "1 2\n"), ("exp", "3\n"), ("act", actual)):
        (tmp_path / name).write_text(text)
        files.append(str(tmp_path / name))
    (tmp_path / "checker.py").write_text(wrap_score_or_exit_checker(source))
    return subprocess.run(
        [sys.executable, str(tmp_path / "checker.py"), *files],
        check=False,
        capture_output=True,
        timeout=30,
    ).returncode


SCORE_CHECKER = "import sys\nexp=open(sys.argv[2]).read().split()\nact=open(sys.argv[3]).read().split()\nprint(1 if exp==act else 0)\n"
EXIT_CHECKER = "import sys\nsys.exit(0 if open(sys.argv[2]).read().split()==open(sys.argv[3]).read().split() else 1)\n"


def test_checker_wrapper_maps_scores_and_exit_codes(tmp_path: Path) -> None:
    assert _run_checker(SCORE_CHECKER, "3\n", tmp_path) == 0
    assert _run_checker(SCORE_CHECKER, "4\n", tmp_path) == 1  # printed 0, exited 0: a reject
    assert _run_checker(EXIT_CHECKER, "3", tmp_path) == 0
    assert _run_checker(EXIT_CHECKER, "5", tmp_path) == 1


def test_limit_parsing() -> None:
    assert parse_time_limit("1 second") == 1.0 and parse_time_limit("2.5 seconds") == 2.5
    assert (
        parse_time_limit("500 ms") == 0.5
        and parse_time_limit(3) == 3.0
        and parse_time_limit(None) is None
    )
    assert parse_memory_limit_mb("256 megabytes") == 256 and parse_memory_limit_mb("1 GB") == 1024
    with pytest.raises(RowError, match="unknown unit"):
        parse_time_limit("3 fortnights")


def test_spec_syntax() -> None:
    s = parse_spec("code_contests:deepmind/code_contests#test")
    assert (s.kind, s.location, s.split) == ("code_contests", "deepmind/code_contests", "test")
    assert parse_spec("humaneval") == parse_spec("HumanEval")
    assert parse_spec("taco:/d/x-*.parquet").local_paths() == []
    with pytest.raises(ValueError, match="needs a path"):
        parse_spec("jsonl")


def test_local_snapshot_folder(code_contests_file: Path, tmp_path: Path) -> None:
    """A folder laid out like a downloaded Hub snapshot loads through datasets as-is."""
    stats = ingest(
        [f"code_contests:{code_contests_file.parent}"], tmp_path / "p.parquet", show_progress=False
    )
    assert stats["problems"] == 2 and stats["quarantined"] == 3


def test_hub_id_without_network_is_a_clear_source_error(tmp_path: Path, monkeypatch) -> None:
    import datasets

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    with pytest.raises(SourceError, match="code_contests.*deepmind/code_contests"):
        ingest(
            ["code_contests"],
            tmp_path / "p.parquet",
            IngestConfig(datasets_cache_dir=str(tmp_path / "cache")),
            show_progress=False,
        )


def test_bundled_source(tmp_path: Path) -> None:
    import pipeline.problems.bundled  # noqa: F401 - our own module: a broken import must fail, not skip

    stats = ingest(["bundled"], tmp_path / "p.parquet", show_progress=False)
    assert stats["problems"] >= 24 and stats["quarantined"] == 0
