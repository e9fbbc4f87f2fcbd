"""The responses file: bad rows are errors naming the row and the field; good ones score by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.common.hub_folder import read_config
from pipeline.common.parquet import write_parquet
from pipeline.evaluate import evaluate
from pipeline.evaluate.responses import ResponsesError, read_responses
from schemas import INSTANCE_SCHEMA


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _heldout(eval_dataset_dir: Path) -> list[dict]:
    return read_config(eval_dataset_dir, "heldout").to_pylist()


def test_hand_written_responses_score_as_worked_out(tmp_path: Path, eval_dataset_dir: Path) -> None:
    rows = _heldout(eval_dataset_dir)
    r0 = rows[0]  # sum2-r0: pass rates A=1.0 B=0.25 C=0.0, gold A
    assert (r0["chosen_answer"], r0["pass_rates"]) == ("A", [1.0, 0.25, 0.0])
    base = {"split": "heldout", "instance_id": r0["instance_id"]}
    listwise = ["<think>\nB\n</think>\n\\boxed{B}", "\\boxed{A}", "\\boxed{A}", "no box"]
    pairs = {(0, 1): "\\boxed{A}", (0, 2): "\\boxed{B}", (1, 2): "\\boxed{A}"}  # A>B, C>A, B>C
    resp = [base | {"sample": s, "response": t} for s, t in enumerate(listwise)]
    resp += [base | {"pair": list(p), "response": t} for p, t in pairs.items()]
    report = evaluate(
        None,
        eval_dataset_dir,
        tmp_path / "out",
        responses=_write(tmp_path / "r.jsonl", resp),
        allow_partial=True,  # one row of the nine
    )
    a = report["splits"]["heldout"]["aletheia"]
    # top-1: first sample says B -> 0; maj: A twice -> 1; invalid 1 of 4
    assert (a["top1_accuracy"], a["majority_accuracy"], a["invalid_rate"]) == (0.0, 1.0, 0.25)
    # a cycle: wins 1, 1, 1 -> tau undefined -> -1; pairwise: A>B right, C>A wrong, B>C right
    assert (a["kendall_tau_b"], a["pairwise_accuracy"], a["transitivity"]) == (-1.0, 2 / 3, 0.0)
    assert list(report["splits"]) == ["heldout"]  # only the splits the file has


def test_parquet_responses_are_read_too(tmp_path: Path, eval_dataset_dir: Path) -> None:
    r0 = _heldout(eval_dataset_dir)[0]
    table = pa.Table.from_pylist(
        [
            {
                "split": "heldout",
                "instance_id": r0["instance_id"],
                "pair": None,
                "sample": 0,
                "response": "\\boxed{A}",
            }
        ]
    )
    pq.write_table(table, tmp_path / "r.parquet")
    report = evaluate(
        None,
        eval_dataset_dir,
        tmp_path / "out",
        responses=tmp_path / "r.parquet",
        allow_partial=True,
    )
    assert report["splits"]["heldout"]["aletheia"]["top1_accuracy"] == 1.0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"prompt_id": "other"}, "field prompt_id"),
        ({"row": 999}, "field row: split has 9 rows"),
        ({"instance_id": "nope"}, "field instance_id: 'nope' is not a row of split heldout"),
        (
            {"instance_id": "sum2-r1-heldout"},
            "field row: 0, but instance_id 'sum2-r1-heldout' is row 1",
        ),
        ({"row": None}, "line 1: field .*give instance_id"),
        ({"split": "nope"}, "unknown dataset config 'nope'"),
        ({"pair": [0, 3]}, "field pair"),
        ({"pair": [2, 1]}, "line 1: field pair"),
        ({"sample": 1}, "listwise samples \\[1\\] are not 0..K-1"),
        ({"response": None}, "line 1: field response"),
    ],
)
def test_bad_rows_name_the_row_and_field(
    tmp_path: Path, eval_dataset_dir: Path, change: dict, message: str
) -> None:
    r0 = _heldout(eval_dataset_dir)[0]
    row = {
        "split": "heldout",
        "row": 0,
        "prompt_id": r0["prompt_id"],
        "sample": 0,
        "response": "x",
    } | change
    with pytest.raises((ResponsesError, FileNotFoundError), match=message):
        evaluate(
            None, eval_dataset_dir, tmp_path / "out", responses=_write(tmp_path / "r.jsonl", [row])
        )


def test_a_sample_given_twice_is_an_error(tmp_path: Path, eval_dataset_dir: Path) -> None:
    r0 = _heldout(eval_dataset_dir)[0]
    row = {"split": "heldout", "row": 0, "prompt_id": r0["prompt_id"], "sample": 0, "response": "x"}
    with pytest.raises(ResponsesError, match="responses row 2 .*sample 0 given twice"):
        evaluate(
            None,
            eval_dataset_dir,
            tmp_path / "out",
            responses=_write(tmp_path / "r.jsonl", [row, row]),
        )
    (tmp_path / "bad.jsonl").write_text("{oops\n")
    with pytest.raises(ResponsesError, match="line 1: not JSON"):
        read_responses(tmp_path / "bad.jsonl")


def _heldout_keyed_by_problem(eval_dataset_dir: Path, root: Path) -> Path:
    """The fixture's heldout split as a build writes it now: prompt_id = the problem's id, so
    the 3 rows of each problem share it."""
    rows = [r | {"prompt_id": r["problem_id"]} for r in _heldout(eval_dataset_dir)]
    write_parquet(
        pa.Table.from_pylist(rows, schema=INSTANCE_SCHEMA), root / "heldout" / "x.parquet"
    )
    return root


def test_responses_keyed_by_instance_id_follow_the_row_wherever_it_is(
    tmp_path: Path, eval_dataset_dir: Path
) -> None:
    rows = _heldout(eval_dataset_dir)
    # the same answers in two orders of the file: instance_id, not the line, names the row
    resp = [
        {
            "split": "heldout",
            "instance_id": r["instance_id"],
            "response": f"\\boxed{{{r['chosen_answer']}}}",
        }
        for r in rows
    ]
    for name, order in (("fwd", resp), ("rev", resp[::-1])):
        report = evaluate(
            None,
            eval_dataset_dir,
            tmp_path / name,
            responses=_write(tmp_path / f"{name}.jsonl", order),
        )
        assert report["splits"]["heldout"]["aletheia"]["top1_accuracy"] == 1.0
        assert report["warnings"] == []
    written = [
        json.loads(x) for x in (tmp_path / "fwd" / "responses.jsonl").read_text().splitlines()
    ]
    assert set(written[0]) == {"split", "instance_id", "pair", "sample", "response"}


def test_an_old_file_keyed_by_row_and_a_shared_prompt_id_is_read_with_a_warning(
    tmp_path: Path, eval_dataset_dir: Path
) -> None:
    data = _heldout_keyed_by_problem(eval_dataset_dir, tmp_path / "data")
    r0 = _heldout(eval_dataset_dir)[0]
    old = [{"split": "heldout", "row": 0, "prompt_id": r0["problem_id"], "sample": 0,
            "response": "\\boxed{A}"}]  # fmt: skip
    report = evaluate(
        None,
        data,
        tmp_path / "out",
        responses=_write(tmp_path / "old.jsonl", old),
        allow_partial=True,
    )
    assert report["splits"]["heldout"]["aletheia"]["top1_accuracy"] == 1.0  # r0's gold is A
    [warning] = report["warnings"]
    assert "heldout: 1 responses rows are keyed by row number and prompt_id" in warning
    assert "write instance_id" in warning
    md = (tmp_path / "out" / "report.md").read_text()
    assert "> **Note**: heldout: 1 responses rows are keyed by row number" in md
    # the fixture's own heldout has one row per prompt_id: an old file there is unambiguous
    old_unique = [old[0] | {"prompt_id": r0["prompt_id"]}]
    report = evaluate(
        None,
        eval_dataset_dir,
        tmp_path / "out2",
        responses=_write(tmp_path / "o2.jsonl", old_unique),
        allow_partial=True,
    )
    assert report["warnings"] == []


def test_a_file_answering_some_rows_is_refused_unless_allowed(
    tmp_path: Path, eval_dataset_dir: Path
) -> None:
    """3 of heldout's 9 rows, all right: without --allow-partial that read top-1 1.000 as if
    the split had been scored; now it is refused, nothing written, and allowed it says its
    coverage in the report, its markdown and the printed summary."""
    from typer.testing import CliRunner

    from aletheia.cli import app

    rows = _heldout(eval_dataset_dir)
    resp = [
        {
            "split": "heldout",
            "instance_id": r["instance_id"],
            "response": f"\\boxed{{{r['chosen_answer']}}}",
        }
        for r in rows[:3]
    ]
    path = _write(tmp_path / "three.jsonl", resp)
    with pytest.raises(
        ResponsesError, match=r"answers 3 of heldout's 9 rows \(test split\).*--allow-partial"
    ):
        evaluate(None, eval_dataset_dir, tmp_path / "refused", responses=path)
    assert not (tmp_path / "refused").exists()  # refused before anything is written

    args = ["evaluate", "--responses", str(path), "--data", str(eval_dataset_dir)]
    refused = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "cli")])
    assert refused.exit_code != 0 and "3 of heldout's 9 rows" in str(refused.exception)

    allowed = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "ok"), "--allow-partial"])
    assert allowed.exit_code == 0, allowed.output
    report = json.loads((tmp_path / "ok" / "report.json").read_text())
    assert report["coverage"] == {"heldout": {"answered": 3, "rows": 9}}
    assert report["splits"]["heldout"]["aletheia"]["top1_accuracy"] == 1.0
    line = "heldout: 3 of 9 rows answered; its metrics are over those alone"
    assert f"coverage: {line}" in allowed.output
    assert f"> **Partial coverage**: {line}" in (tmp_path / "ok" / "report.md").read_text()

    # every row answered: scored without the flag, coverage whole and no partial line
    every = [
        {"split": "heldout", "instance_id": r["instance_id"], "response": "\\boxed{A}"}
        for r in rows
    ]
    whole = evaluate(
        None, eval_dataset_dir, tmp_path / "all", responses=_write(tmp_path / "all.jsonl", every)
    )
    assert whole["coverage"] == {"heldout": {"answered": 9, "rows": 9}}
    assert "Partial coverage" not in (tmp_path / "all" / "report.md").read_text()


def test_a_limited_run_rescores_without_the_flag(
    tmp_path: Path, tiny_model_dir: Path, eval_dataset_dir: Path
) -> None:
    """A model run on `--limit 1` answered the first row of each split on purpose: its
    responses (the limit recorded beside them) rescore without --allow-partial, the
    coverage still said; the same file with the limit gone is refused."""
    small = {"k": 1, "max_new_tokens": 4, "limit": 1, "splits": ["heldout"]}
    run = evaluate(tiny_model_dir, eval_dataset_dir, tmp_path / "run", small)
    assert run["coverage"] == {"heldout": {"answered": 1, "rows": 9}}
    again = evaluate(
        None, eval_dataset_dir, tmp_path / "again", responses=tmp_path / "run" / "responses.jsonl"
    )
    assert again["coverage"] == run["coverage"] and again["generated_with"]["limit"] == 1
    bare = tmp_path / "bare" / "responses.jsonl"
    bare.parent.mkdir()
    bare.write_text((tmp_path / "run" / "responses.jsonl").read_text())
    with pytest.raises(ResponsesError, match="1 of heldout's 9 rows"):
        evaluate(None, eval_dataset_dir, tmp_path / "x", responses=bare)
