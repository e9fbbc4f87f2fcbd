"""Conformance: the row contract and the dataset side's prompt option
(docs/aletheia-conformance.md, rows "prompt_id", "integer widths", "modification",
"prompt template"). Aletheia's rows (src/cerebrm_datagen.py, `main`) are dicts written by
`datasets.Dataset.from_list`: `prompt_id` is the source problem's `id`, Python ints become
int64, and its Adv rows (src/rq4_datagen.py) carry one `modification` string per row."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow as pa

from pipeline.config import RunConfig
from pipeline.instances.assemble import assemble_frames
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.synthetic import judged_frame, synthetic_problems
from schemas.instance import INSTANCE_SCHEMA

ALETHEIA_COLUMNS = [
    ("prompt_id", pa.string()),
    ("query", pa.string()),
    ("generator", pa.string()),
    ("language", pa.string()),
    ("num_candidates", pa.int64()),
    ("candidates", pa.list_(pa.string())),
    ("chosen_position", pa.int64()),
    ("chosen_answer", pa.string()),
    ("pass_rates", pa.list_(pa.float64())),
    ("easy_hard", pa.string()),
    ("weak_strong", pa.string()),
    ("source", pa.string()),
]


def test_aletheia_columns_come_first_with_aletheias_types() -> None:
    head = [(f.name, f.type) for f in INSTANCE_SCHEMA][: len(ALETHEIA_COLUMNS)]
    assert head == ALETHEIA_COLUMNS
    modification = INSTANCE_SCHEMA.field("modification")
    assert modification.type == pa.string() and modification.nullable
    assert INSTANCE_SCHEMA.field("instance_id").type == pa.string()
    assert not INSTANCE_SCHEMA.field("instance_id").nullable


def test_prompt_id_is_the_problem_shared_by_its_instances() -> None:
    problems, _ = synthetic_problems(1)
    pids = ["p1", "p2"]
    problems = pl.DataFrame(
        [problems.row(0, named=True) | {"problem_id": p} for p in pids], schema=problems.schema
    )
    assignments = pl.DataFrame({"problem_id": pids, "split": ["train", "train"]})
    rows = []
    for pid in pids:  # one AC and three WA at distinct easy rates: 3 pairs + 3 triples each
        rows.append(
            {
                "problem_id": pid,
                "language": "python",
                "code": f"print('{pid}')",
                "verdict": "AC",
                "passed": 10,
            }
        )
        rows += [
            {
                "problem_id": pid,
                "language": "python",
                "code": f"print('{pid}{i}')",
                "verdict": "WA",
                "passed": i,
            }
            for i in (0, 1, 2)
        ]
    cfg = AssembleConfig(
        splits=[SplitSpec(name="train")], max_candidate_tokens=None, max_prompt_tokens=None
    )
    train = assemble_frames(judged_frame(rows), problems, assignments, cfg)[0]["train"]
    got = train.to_pylist()
    assert len(got) == 12
    assert sorted({r["prompt_id"] for r in got}) == ["p1", "p2"]
    assert all(r["prompt_id"] == r["problem_id"] for r in got)
    assert len({r["instance_id"] for r in got}) == 12  # the row's own name
    assert {r["modification"] for r in got} == {None}
    assert train.schema.field("num_candidates").type == pa.int64()


def test_prompt_template_reaches_assembly_and_dpo(tmp_path: Path) -> None:
    template = tmp_path / "published.txt"
    template.write_text(
        "[QUESTION]\n{question}\n[/QUESTION]\n{candidates}\nOptions: {valid_options}"
    )
    cfg = RunConfig(prompt_template=str(template))
    assert cfg.assemble.prompt_template == str(template)
    if "prompt_template" in type(cfg.dpo).model_fields:  # the DPO field comes with conf-adv-dpo
        assert cfg.dpo.prompt_template == str(template)  # type: ignore[attr-defined]
    other = RunConfig(prompt_template=str(template), assemble={"prompt_template": None})
    assert other.assemble.prompt_template is None  # a section's own setting wins
    assert RunConfig().build_id != cfg.build_id  # the template is part of the build
