"""Conformance: where the evaluation splits' problems come from (issue 29, "Data";
docs/aletheia-conformance.md row D3).

Aletheia (`src/listwise_eval_sets.py`, 1431408): every executed problem whose prompt_id is
not in Train (`_by_prompt_id` against CerebRM-Dataset's ids) feeds the evaluation sets, so a
problem that yields no Train row, whatever the reason, is evaluation material. Ours by
default: a seeded 10% of the near-duplicate clusters, drawn before sampling. The option
`splits.heldout_rule: not_in_train` reproduces Aletheia's rule at cluster level: the split
stage sends every cluster to train, assembly builds Train, then the evaluation splits from
every cluster none of whose problems has a Train row (a near-duplicate of a Train problem
stays out: invariant 2), and Train-Questions keeps only Train's side.

The hand-built case (20 tests per problem, easy wrong pass rates 0, .05, .1, .15):

- `p_train`: three generators, each with one correct and four wrong programs -> Train's
  construction gives 3 combinations per size for sizes 2, 3, 4 per generator: 9 rows per
  size, over Aletheia's "more than 6 rows per prompt_id" -> Train rows;
- `p_left`: one generator, same programs -> 3 rows per size: too few for Train, so in
  Aletheia it is an evaluation problem; Heldout (listwise, 5 combinations x 1 pick) makes
  C(4,1) + min(5, C(4,2)) + C(4,3) = 4 + 5 + 4 = 13 lists of it;
- `p_twin`: the same statement as `p_train` (one cluster), one generator -> no Train row,
  and not evaluation material either (a near-duplicate of a Train problem).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.common.parquet import write_parquet
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.stage import assemble
from pipeline.instances.synthetic import judged_frame, synthetic_problems
from pipeline.splits.config import SplitConfig
from pipeline.splits.stage import split_problems
from schemas.problem import PROBLEM_SCHEMA

TOTAL = 20
WORDS = "read the array of integers and print the smallest prefix sum modulo a prime number"


def _problems(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    template, _ = synthetic_problems(1)
    base = template.row(0, named=True)
    texts = {
        "p_train": f"{WORDS} {WORDS} then stop.",
        "p_left": "Given a tree with n vertices count the leaves whose depth is even and "
        "print that count followed by the number of internal vertices of odd degree.",
        "p_twin": f"{WORDS} {WORDS} then stop.",  # a duplicate statement: p_train's cluster
    }
    rows = [
        base | {"problem_id": p, "source_id": p, "statement": t, "prompt_statement": t}
        for p, t in texts.items()
    ]
    path = tmp_path / "problems.parquet"
    write_parquet(pa.Table.from_pylist(rows, schema=PROBLEM_SCHEMA), path, PROBLEM_SCHEMA)
    return path, texts


def _group(pid: str, gen: str) -> list[dict]:
    base = {"problem_id": pid, "generator": gen, "tier": "weak", "language": "python"}
    rows = [base | {"code": f'print("{pid}-{gen}-ok")', "verdict": "AC", "passed": TOTAL}]
    rows += [
        base | {"code": f'print("{pid}-{gen}-{p}")', "verdict": "WA", "passed": p}
        for p in (0, 1, 2, 3)
    ]
    return rows


def _judged(tmp_path: Path) -> Path:
    rows = [r for g in ("g1", "g2", "g3") for r in _group("p_train", g)]
    rows += _group("p_left", "g1") + _group("p_twin", "g1")
    path = tmp_path / "judged.parquet"
    judged_frame(rows, total=TOTAL).write_parquet(path)
    return path


SPLITS = [
    SplitSpec(name="train", problems="train", min_rows_per_prompt_id=7),
    SplitSpec(name="heldout", problems="heldout"),
]


def _config(**kw: object) -> AssembleConfig:
    return AssembleConfig(splits=SPLITS, max_candidate_tokens=None, max_prompt_tokens=None, **kw)  # type: ignore[arg-type]


def test_d3_aletheias_rule_takes_every_problem_not_in_train(tmp_path: Path) -> None:
    problems, _ = _problems(tmp_path)
    judged = _judged(tmp_path)
    rule = SplitConfig(heldout_rule="not_in_train")
    split_problems(problems, tmp_path / "splits", rule, show_progress=False)
    assignments = pq.read_table(tmp_path / "splits" / "assignments.parquet").to_pylist()
    # the split stage sends every cluster to train; the twins share a cluster
    assert {a["problem_id"]: a["split"] for a in assignments} == dict.fromkeys(
        ("p_train", "p_left", "p_twin"), "train"
    )
    cluster = {a["problem_id"]: a["cluster_id"] for a in assignments}
    assert cluster["p_train"] == cluster["p_twin"] != cluster["p_left"]
    questions = pq.read_table(tmp_path / "splits" / "train_questions.parquet")
    assert sorted(questions.column("problem_id").to_pylist()) == ["p_left", "p_train"]  # twin: dup

    out = tmp_path / "instances"
    stats = assemble(
        judged, problems, tmp_path / "splits", out, _config(eval_problems="not_in_train")
    )
    train = pq.read_table(out / "train.parquet").to_pylist()
    heldout = pq.read_table(out / "heldout.parquet").to_pylist()
    assert {r["problem_id"] for r in train} == {"p_train"}
    assert len(train) == 27  # 3 generators x 3 combinations x sizes 2, 3, 4
    assert {r["problem_id"] for r in heldout} == {"p_left"}  # not p_twin: Train's cluster
    assert len(heldout) == 13
    assert stats["eval_problems"] == {
        "rule": "not_in_train",
        "train_problems": 1,
        "eval_problems_offered": 1,
        "left_out_as_train_or_near_duplicate": 2,
    }
    # Train-Questions keeps Train's side only: p_left went to the evaluation splits
    kept = pq.read_table(out / "train_questions.parquet").column("problem_id").to_pylist()
    assert kept == ["p_train"]
    assert stats["train_questions"] == {"rows": 1, "left_out_in_eval_pool": 1}

    # the default rule on the same split: every problem is train, so Heldout is empty
    default = tmp_path / "default"
    assemble(judged, problems, tmp_path / "splits", default, _config())
    assert pq.read_table(default / "heldout.parquet").num_rows == 0
    assert not (default / "train_questions.parquet").exists()


def test_d3_the_rule_is_an_option_and_keeps_old_ids() -> None:
    from pipeline.config import RunConfig, data_projection

    assert SplitConfig().heldout_rule == "clusters"  # the default: the 10% cluster draw
    assert "heldout_rule" not in SplitConfig().model_dump()  # existing keys and ids stay
    assert "eval_problems" not in AssembleConfig().model_dump()
    cfg = RunConfig.model_validate({"splits": {"heldout_rule": "not_in_train"}})
    assert cfg.assemble.eval_problems == "not_in_train"  # the run config passes it on
    assert data_projection(cfg)["splits"]["heldout_rule"] == "not_in_train"
    assert cfg.build_id != RunConfig.model_validate({}).build_id
    with pytest.raises(ValueError, match="heldout_fraction"):
        SplitConfig(heldout_rule="not_in_train", heldout_fraction=0.2)
    with pytest.raises(ValueError, match="eval_after"):
        SplitConfig(heldout_rule="not_in_train", eval_after="2024-01-01")  # type: ignore[arg-type]
