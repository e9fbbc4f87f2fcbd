"""The shared contracts: schemas, ids, deterministic Parquet and stage caching."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.stage import is_done, mark_done, read_stats, stage_key
from schemas import (
    INSTANCE_SCHEMA,
    PROBLEM_SCHEMA,
    Instance,
    Problem,
    TestCase,
    models_to_table,
    table_to_models,
)
from schemas.ids import candidate_id_for, normalize_code, problem_id_for
from schemas.tables import SchemaError, validate_table


def _problem(i: int = 0) -> Problem:
    return Problem(
        problem_id=problem_id_for("unit", str(i)),
        source="unit",
        source_id=str(i),
        statement="Print the sum of two integers.",
        test_mode="stdio",
        tests=[TestCase(input="1 2\n", output="3\n")],
    )


def test_problem_round_trips_through_arrow() -> None:
    table = models_to_table([_problem(0), _problem(1)], PROBLEM_SCHEMA)
    assert table.schema.equals(PROBLEM_SCHEMA)
    back = table_to_models(table, Problem)
    assert back[1] == _problem(1)


def test_problem_rejects_tests_that_do_not_match_mode() -> None:
    with pytest.raises(ValueError, match=r"tests\[0\]: stdio tests need both input and output"):
        Problem(
            problem_id="p",
            source="s",
            source_id="1",
            statement="x",
            test_mode="stdio",
            tests=[TestCase(input="1")],
        )


def test_unknown_fields_are_an_error_not_a_silent_drop() -> None:
    with pytest.raises(ValueError, match="extra"):
        TestCase(input="1", output="2", expected="2")  # type: ignore[call-arg]


def test_validate_table_names_the_null_column_and_row() -> None:
    inst = Instance(
        prompt_id="p",
        query="q",
        generator="g",
        language="python",
        num_candidates=2,
        candidates=["a", "b"],
        chosen_position=1,
        chosen_answer="B",
        pass_rates=[0.5, 1.0],
        easy_hard="easy",
        weak_strong="weak",
        source="s",
        instance_id="i_1",
        problem_id="p",
        candidate_ids=["1", "2"],
        candidate_origins=["policy"] * 2,
        candidate_generators=["m"] * 2,
        candidate_languages=["python"] * 2,
        verdicts=["WA", "AC"],
        adversarial=[None, None],
        split="train",
        build_id="b",
    )
    table = models_to_table([inst, inst], INSTANCE_SCHEMA)
    broken = table.set_column(1, "query", pa.array(["q", None], pa.string()))
    with pytest.raises(SchemaError, match=r"'query' is null at row 1"):
        validate_table(broken, INSTANCE_SCHEMA)


def test_ids_are_stable_and_normalised() -> None:
    assert problem_id_for("a", "1") == problem_id_for("a", "1") != problem_id_for("a", "2")
    assert normalize_code("x = 1  \r\ny = 2\n\n") == "x = 1\ny = 2"
    assert candidate_id_for("python", "x = 1\n") == candidate_id_for("python", "x = 1   ")
    assert candidate_id_for("python", "x = 1") != candidate_id_for("cpp", "x = 1")


def test_parquet_writes_are_byte_identical(tmp_path) -> None:
    table = models_to_table([_problem(i) for i in range(5)], PROBLEM_SCHEMA)
    a = write_parquet(table, tmp_path / "a.parquet", PROBLEM_SCHEMA)
    b = write_parquet(table, tmp_path / "b.parquet", PROBLEM_SCHEMA)
    assert a.read_bytes() == b.read_bytes()
    assert read_parquet(a, PROBLEM_SCHEMA).num_rows == 5
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary files left behind


def test_stage_marker_detects_changed_config_and_inputs(tmp_path) -> None:
    inp = tmp_path / "in.txt"
    inp.write_text("v1")
    key = stage_key("s", "1", {"k": 1}, [inp], seed=0)
    assert not is_done(tmp_path / "out", key)
    mark_done(tmp_path / "out", key, "s", {"rows": 3})
    assert is_done(tmp_path / "out", key)
    assert read_stats(tmp_path / "out") == {"rows": 3}
    assert stage_key("s", "1", {"k": 2}, [inp], seed=0) != key
    inp.write_text("v2")
    assert stage_key("s", "1", {"k": 1}, [inp], seed=0) != key


def test_train_questions_columns_are_the_problem_columns_plus_query() -> None:
    from schemas.problem import PROBLEM_SCHEMA, TRAIN_QUESTIONS_SCHEMA

    for f in TRAIN_QUESTIONS_SCHEMA:
        if f.name == "query":
            assert f.type == "string" and not f.nullable
        else:  # same name, type and nullability as in the problems table
            assert PROBLEM_SCHEMA.field(f.name) == f, f.name
    assert TRAIN_QUESTIONS_SCHEMA.names[4] == "query" and len(TRAIN_QUESTIONS_SCHEMA) == 18
