"""Best-of-N's parts without a model or a sandbox: reading samples (JSONL and Parquet, their
mistakes as one line naming the row), the verifier-free selectors, the verifier's requests
(selection and scoring prompts, seeds, constrained letters) and the function-mode probe's
rewrite of the tests, run here on plain Python."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.bestofn.config import BestOfNConfig
from pipeline.bestofn.metrics import logprob_pick, shortest_pick
from pipeline.bestofn.probes import MARK, function_probe, majority_pick
from pipeline.bestofn.samples import Sample, load_samples
from pipeline.bestofn.verifier import Ask, Verifier
from pipeline.errors import UserError
from schemas.problem import Problem


def _problem(sid: str) -> Problem:
    return Problem(
        problem_id=f"p-{sid}", source="mbpp", source_id=sid, title="t", statement=f"task {sid}",
        test_mode="function", entry_point="f", tests=[{"code": "assert f(1) == 2\n"}],
        time_limit_s=1.0, memory_limit_mb=64, license="x",
    )  # fmt: skip


PROBLEMS = {p.problem_id: p for p in (_problem("11"), _problem("2"))}


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_jsonl_samples_match_problems_by_id_or_source_id(tmp_path: Path) -> None:
    rows = [
        {"task_id": 11, "completion": "Here:\n```python\ndef f(x):\n    return x + 1\n```"},
        {"task_id": 11, "code": "def f(x):\n    return 2", "mean_logprob": -0.5},
        {"problem_id": "p-2", "code": "def f(x): return x", "sample_index": 1},
        {"problem_id": "p-2", "code": "", "sample_index": 0, "logprobs": [-1.0, -3.0]},
    ]
    got = load_samples(_jsonl(tmp_path / "s.jsonl", rows), PROBLEMS)
    assert [ps.problem.source_id for ps in got] == ["2", "11"]  # source-id order
    two, eleven = got
    assert [s.index for s in two.samples] == [0, 1] and two.samples[0].mean_logprob == -2.0
    assert eleven.samples[0].code == "def f(x):\n    return x + 1"  # extracted from the fence
    assert eleven.samples[1].mean_logprob == -0.5 and eleven.language == "python"
    # --n 1: each problem's first sample only
    assert [len(ps.samples) for ps in load_samples(tmp_path / "s.jsonl", PROBLEMS, n=1)] == [1, 1]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"task_id": 99, "code": "x"}], "line 1: task_id '99' is not in the problems file"),
        ([{"code": "x"}], "line 1: no problem_id, source_id or task_id"),
        ([{"task_id": 2}], "line 1: no code or completion"),
        ([{"task_id": 2, "code": "x", "language": "rust"}], "language 'rust' is not one of"),
        ([{"task_id": 2, "code": "x", "mean_logprob": "high"}], "field mean_logprob must be"),
        (
            [
                {"task_id": 2, "code": "a"},
                {"task_id": 11, "code": "b"},
                {"task_id": 11, "code": "c"},
            ],
            "problems have [1, 2] samples; give N (--n)",
        ),
    ],
)
def test_bad_samples_are_one_line_naming_the_row(
    tmp_path: Path, rows: list[dict], message: str
) -> None:
    with pytest.raises(UserError, match=None) as e:
        load_samples(_jsonl(tmp_path / "s.jsonl", rows), PROBLEMS)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_fewer_samples_than_n_is_an_error(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "s.jsonl", [{"task_id": 2, "code": "a"}])
    with pytest.raises(UserError, match="fewer than N=3 samples"):
        load_samples(path, PROBLEMS, n=3)


def test_policy_evaluation_parquet_reads_without_a_language_column(tmp_path: Path) -> None:
    table = pa.Table.from_pylist(
        [
            {"problem_id": "p-2", "sample_index": 1, "code": None, "completion": "no fence"},
            {
                "problem_id": "p-2",
                "sample_index": 0,
                "code": "def f(x): return 2",
                "completion": "",
            },
        ]
    )
    (tmp_path / "eval").mkdir()
    pq.write_table(table, tmp_path / "eval" / "samples.parquet")
    (ps,) = load_samples(tmp_path / "eval", PROBLEMS)
    assert [s.code for s in ps.samples] == ["def f(x): return 2", ""]  # no program stays


def test_verifier_free_selectors() -> None:
    samples = [
        Sample(0, "", "python"),  # no program: never the shortest
        Sample(1, "def f(x):\n    return x + 1", "python", -0.9),
        Sample(2, "def f(x): return 2", "python", -0.2),
        Sample(3, "def f(x): return 2", "python", -0.2),
    ]
    assert shortest_pick(samples) == 2  # ties to the first
    assert shortest_pick([Sample(0, " ", "python")]) == 0
    assert logprob_pick(samples) == 2  # the highest mean, ties to the first; 0 has none
    assert logprob_pick(samples[:1]) is None
    # majority: the largest group of equal outputs; ties to the group met first; samples
    # with no output anywhere are in no group
    assert majority_pick([("a",), ("b",), ("b",), None]) == 1
    assert majority_pick([("a",), ("b",), ("a",), ("b",)]) == 0
    assert majority_pick([(None,), None]) is None


def test_verifier_requests_select_or_score(tiny_model_dir: Path) -> None:
    from pipeline.bestofn.samples import ProblemSamples

    ps = ProblemSamples(
        PROBLEMS["p-2"], tuple(Sample(i, f"def f(x): return {i}", "python") for i in range(3))
    )
    cfg = BestOfNConfig(verifier=str(tiny_model_dir), constrain_answer=True, k=3)
    v = Verifier(None, cfg, [ps])  # type: ignore[arg-type]  # requests only: no backend
    listed = v.request(Ask(0, (0, 1, 2), "list:n=3"))
    assert listed.n == 3 and listed.answer_choices == ["A", "B", "C"]
    assert "task 2" in listed.messages[0]["content"]  # type: ignore[index]
    assert listed.messages[-1] == {"role": "assistant", "content": "<think>\n"}  # type: ignore[index]
    pair = v.request(Ask(0, (2, 0), "pair:2,0"))
    assert "return 2" in pair.messages[0]["content"].split("[CANDIDATE_B]")[0]  # type: ignore[index]
    assert pair.seed != listed.seed  # each prompt its own seed
    scoring = Verifier(
        None, cfg.model_copy(update={"constrain_answer": False, "scoring": True}), [ps]
    )  # type: ignore[arg-type]
    scored = scoring.request(Ask(0, (0, 1, 2), "list:n=3"))
    assert "\\boxed{[s_A, s_B, s_C]}" in scored.messages[0]["content"]  # type: ignore[index]
    assert scored.answer_choices is None
    with pytest.raises(ValueError, match="constrain_answer"):
        BestOfNConfig(verifier="v", constrain_answer=True, scoring=True)
    with pytest.raises(ValueError, match="list mode shows at most 8"):
        BestOfNConfig(verifier="v", samples=9)


def test_function_probe_records_the_value_under_test(tmp_path: Path) -> None:
    """The rewritten tests, run after a candidate on plain Python: the equality's left side is
    recorded (the expected value never), other asserts dropped, an exception gives no output."""
    probe = function_probe("import math\nassert f(2) == 99\nassert f(3) > 0\n")
    assert probe is not None and "99" not in probe

    def run(candidate: str) -> str:
        script = tmp_path / "run.py"
        script.write_text(candidate + "\n" + probe)
        done = subprocess.run(
            [sys.executable, str(script)], check=True, capture_output=True, text=True
        )
        return done.stderr.strip().splitlines()[-1]

    same = run("def f(x):\n    return x * 2")
    assert same.startswith(f"{MARK} ok:") and run("def f(x):\n    return x + x") == same
    assert run("def f(x):\n    return x + 1") != same
    assert run("def f(x):\n    raise ValueError") == f"{MARK} none:"
    assert function_probe("assert f(1) ==") is None  # does not parse: no probe
