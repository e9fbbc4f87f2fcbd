"""Assembly on synthetic judged tables: selection rules, splits, balance, determinism.

The invariants on real sandbox verdicts are in test_end_to_end.py; here the verdicts are
drawn so that every rule can be exercised at sizes where statistics mean something.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from scipy.stats import chisquare

from pipeline.common.parquet import write_parquet
from pipeline.common.runner import run_stage
from pipeline.common.stage import MARKER
from pipeline.instances.assemble import AssemblyInputError, assemble_frames
from pipeline.instances.checks import disjoint_problem_violations, instance_violations
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.normalize import normalize_code
from pipeline.instances.stage import ASSEMBLE, assemble, split_tables
from pipeline.instances.synthetic import judged_frame, synthetic_judged, synthetic_problems
from schemas import JUDGED_CANDIDATE_SCHEMA, PROBLEM_SCHEMA, SPLIT_ASSIGNMENT_SCHEMA


@pytest.fixture(scope="module")
def synthetic() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    judged = synthetic_judged(60_000, n_problems=600, seed=3)
    problems, assignments = synthetic_problems(600, seed=3)
    return judged, problems, assignments


@pytest.fixture(scope="module")
def built(synthetic: tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]) -> tuple[dict, list, dict]:
    return assemble_frames(*synthetic, AssembleConfig(seed=7))


def test_every_split_satisfies_invariant_1(built: tuple[dict, list, dict]) -> None:
    tables, _, _ = built
    evals = ("heldout", "strong", "hard")
    assert set(tables) == {"train", *evals, *(f"{e}.test" for e in evals)}
    for name, table in tables.items():
        assert table.num_rows > 100, name
        assert instance_violations(table) == [], name
        assert set(table.column("split").to_pylist()) == {name.removesuffix(".test")}
    for e in evals:  # the test split: rows of the full split, in its order
        full_ids = tables[e].column("instance_id").to_pylist()
        test_ids = tables[f"{e}.test"].column("instance_id").to_pylist()
        assert test_ids == [i for i in full_ids if i in set(test_ids)]


def test_train_and_eval_splits_share_no_problem(built: tuple[dict, list, dict], synthetic) -> None:
    tables, _, _ = built
    _, _, assignments = synthetic
    split_of = dict(assignments.select("problem_id", "split").iter_rows())
    assert (
        disjoint_problem_violations(
            tables["train"], [tables[s] for s in ("heldout", "strong", "hard")]
        )
        == []
    )
    assert {split_of[p] for p in tables["train"].column("problem_id").to_pylist()} == {"train"}
    for s in ("heldout", "strong", "hard"):
        assert {split_of[p] for p in tables[s].column("problem_id").to_pylist()} == {"heldout"}


def test_tier_band_and_diversity_rules(built: tuple[dict, list, dict]) -> None:
    tables, _, _ = built
    for name, table in tables.items():
        base = name.removesuffix(".test")
        tier = "strong" if base == "strong" else "weak"
        band = "hard" if base == "hard" else "easy"
        assert set(table.column("weak_strong").to_pylist()) == {tier}
        assert set(table.column("easy_hard").to_pylist()) == {band}
        for row in table.select(["pass_rates", "chosen_position"]).to_pylist():
            wrong = [p for i, p in enumerate(row["pass_rates"]) if i != row["chosen_position"]]
            assert len(set(wrong)) == len(wrong), "two incorrect candidates share a pass rate"
            if band == "easy":
                assert max(wrong) <= 0.5
            else:
                assert all(0.7 <= p <= 0.9 for p in wrong)


def test_aletheia_grouping_keeps_one_generator_and_language(built: tuple[dict, list, dict]) -> None:
    for table in built[0].values():
        for row in table.select(
            ["candidate_generators", "candidate_languages", "generator", "language"]
        ).to_pylist():
            assert set(row["candidate_generators"]) == {row["generator"]}
            assert set(row["candidate_languages"]) == {row["language"]}


@pytest.mark.parametrize("grouping", ["language", "mixed"])
def test_other_groupings(synthetic, grouping: str) -> None:
    judged, problems, assignments = synthetic
    # One group per problem under `mixed`: at most 3 lists per size, so Aletheia's
    # more-than-6-rows rule for Train is relaxed here.
    cfg = AssembleConfig(grouping=grouping, splits=[SplitSpec(name="train", problems="train")])  # type: ignore[arg-type]
    tables, _, _ = assemble_frames(judged, problems, assignments, cfg)
    train = tables["train"].to_pylist()
    assert len(train) > 100
    assert instance_violations(tables["train"]) == []
    if grouping == "language":
        assert all(len(set(r["candidate_languages"])) == 1 for r in train)
        assert any(r["generator"] == "mixed" for r in train)
    else:
        assert any(r["language"] == "mixed" for r in train)
        assert all(
            r["language"] == "mixed" or len(set(r["candidate_languages"])) == 1 for r in train
        )


def test_correct_position_is_uniform(synthetic) -> None:
    judged, problems, assignments = synthetic
    cfg = AssembleConfig(
        seed=11,
        splits=[SplitSpec(name="train", problems="train", max_instances_per_group=4)],
    )
    train = assemble_frames(judged, problems, assignments, cfg)[0]["train"]
    sizes = np.asarray(train.column("num_candidates").to_pylist())
    pos = np.asarray(train.column("chosen_position").to_pylist())
    tested = 0
    for n in range(2, 6):
        observed = np.bincount(pos[sizes == n], minlength=n)
        if observed.sum() < 30 * n:
            continue
        assert len(observed) == n
        assert chisquare(observed).pvalue > 0.001, (n, observed)
        tested += 1
    assert tested >= 3


def test_size_targets_and_caps(synthetic) -> None:
    judged, problems, assignments = synthetic
    targets = {2: 150, 3: 150, 4: 150, 5: 150}
    cfg = AssembleConfig(
        selection="balanced",
        splits=[
            SplitSpec(
                name="train",
                problems="train",
                size_targets=targets,
                max_instances_per_group=3,
                max_instances_per_problem=3,
            ),
            SplitSpec(name="heldout", problems="heldout", cap_per_stratum=20),
        ],
    )
    tables, _, stats = assemble_frames(judged, problems, assignments, cfg)
    train, heldout = tables["train"], tables["heldout"]
    sizes = train.column("num_candidates").to_pylist()
    assert {n: sizes.count(n) for n in range(2, 6)} == targets
    per_problem = pl.Series(train.column("problem_id").to_pylist()).value_counts()
    assert per_problem.get_column("count").max() <= 3
    strata = heldout.select(["num_candidates", "language"]).to_pylist()
    counts: dict[tuple, int] = {}
    for r in strata:
        counts[(r["num_candidates"], r["language"])] = (
            counts.get((r["num_candidates"], r["language"]), 0) + 1
        )
    assert max(counts.values()) == 20
    assert stats["splits"]["heldout"]["dropped_stratum_cap"] > 0


# One Train split with no Aletheia row minimum, for the few-row tests of our own rules.
TRAIN = SplitSpec(name="train", problems="train")


def _tiny_problem_frames(pids: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    problems, _ = synthetic_problems(1)
    rows = [problems.row(0, named=True) | {"problem_id": p} for p in pids]
    problems = pl.DataFrame(rows, schema=problems.schema)
    assignments = pl.DataFrame({"problem_id": pids, "split": ["train"] * len(pids)})
    return problems, assignments


def test_duplicates_after_normalisation_never_share_an_instance() -> None:
    base = "def f(a, b):\n    return a + b\nprint(f(1, 2))"
    variants = [
        base,
        "def f(a,b):  # add\n    return a+b\n\nprint(f(1,2))  ",
        "# a comment\ndef f(a, b):\n    return a  +  b\nprint( f(1, 2) )",
    ]
    assert len({normalize_code(v, "python") for v in variants}) == 1
    rows = [
        {"problem_id": "p1", "language": "python", "code": v, "verdict": "WA", "passed": 3}
        for v in variants
    ]
    rows += [
        {
            "problem_id": "p1",
            "language": "python",
            "code": "print(3)",
            "verdict": "AC",
            "passed": 10,
        },
        {
            "problem_id": "p1",
            "language": "python",
            "code": "print(4)",
            "verdict": "WA",
            "passed": 1,
        },
    ]
    problems, assignments = _tiny_problem_frames(["p1"])
    tables, _, stats = assemble_frames(
        judged_frame(rows),
        problems,
        assignments,
        AssembleConfig(selection="balanced", one_incorrect_per_pass_rate=False, splits=[TRAIN]),
    )
    (row,) = tables["train"].to_pylist()
    assert row["num_candidates"] == 3  # the AC one, print(4) and ONE of the three variants
    assert len({normalize_code(c, "python") for c in row["candidates"]}) == 3
    assert stats["splits"]["train"]["pool"] - stats["splits"]["train"]["after_dedup"] == 2


def test_bad_rows_are_quarantined_not_dropped() -> None:
    rows = [
        {
            "problem_id": "p1",
            "language": "python",
            "code": "print(1)",
            "verdict": "AC",
            "passed": 10,
        },
        {
            "problem_id": "p1",
            "language": "python",
            "code": "print(2)",
            "verdict": "AC",
            "passed": 7,
        },  # AC yet 7/10
        {
            "problem_id": "p1",
            "language": "python",
            "code": "print(3)",
            "verdict": "WA",
            "passed": 10,
        },  # WA yet 10/10
        {
            "problem_id": "p1",
            "language": "python",
            "code": "print(4)",
            "verdict": "OK",
            "passed": 1,
        },  # no such verdict
        {
            "problem_id": "nope",
            "language": "python",
            "code": "print(5)",
            "verdict": "WA",
            "passed": 1,
        },
        {
            "problem_id": "p1",
            "language": "python",
            "code": "print(6)",
            "verdict": "SE",
            "passed": 0,
        },
        {
            "problem_id": "p1",
            "language": "python",
            "code": "print(7)",
            "verdict": "WA",
            "passed": 2,
        },
    ]
    problems, assignments = _tiny_problem_frames(["p1"])
    tables, quarantine, stats = assemble_frames(
        judged_frame(rows),
        problems,
        assignments,
        AssembleConfig(selection="balanced", splits=[TRAIN]),
    )
    reasons = {(q["field"], q["reason"]) for q in quarantine}
    assert ("verdict", "verdict AC but 7/10 tests passed") in reasons
    assert ("verdict", "verdict WA but every test passed") in reasons
    assert ("verdict", "unknown verdict OK") in reasons
    assert ("problem_id", "problem_id is not in the problems table") in reasons
    assert stats["input"]["left_out"]["sandbox_error"] == 1
    (row,) = tables["train"].to_pylist()
    assert sorted(row["candidates"]) == ["print(1)", "print(7)"]


def test_flaky_duplicates_are_left_out() -> None:
    rows = [
        {
            "problem_id": "p1",
            "language": "cpp",
            "code": "int main(){return 0;}",
            "verdict": "AC",
            "passed": 10,
        },
        {
            "problem_id": "p1",
            "language": "cpp",
            "code": "int main() { return 0; } // again",
            "verdict": "TLE",
            "passed": 4,
        },
        {
            "problem_id": "p1",
            "language": "cpp",
            "code": "int main(){return 1;}",
            "verdict": "RE",
            "passed": 0,
        },
    ]
    problems, assignments = _tiny_problem_frames(["p1"])
    tables, _, stats = assemble_frames(judged_frame(rows), problems, assignments, AssembleConfig())
    assert stats["input"]["left_out"]["flaky_duplicates"] == 2
    assert tables["train"].num_rows == 0


def test_a_problem_in_two_splits_is_an_error() -> None:
    problems, _ = _tiny_problem_frames(["p1"])
    assignments = pl.DataFrame({"problem_id": ["p1", "p1"], "split": ["train", "heldout"]})
    rows = [{"problem_id": "p1", "language": "python", "code": "x", "verdict": "AC", "passed": 10}]
    with pytest.raises(AssemblyInputError, match="p1"):
        assemble_frames(judged_frame(rows), problems, assignments, AssembleConfig())


def _write_inputs(
    tmp: Path, judged: pl.DataFrame, problems: pl.DataFrame, assignments: pl.DataFrame
) -> tuple[Path, Path, Path]:
    write_parquet(judged.to_arrow(), tmp / "judged.parquet", JUDGED_CANDIDATE_SCHEMA)
    write_parquet(problems.to_arrow(), tmp / "problems.parquet", PROBLEM_SCHEMA)
    write_parquet(
        assignments.to_arrow(), tmp / "splits" / "assignments.parquet", SPLIT_ASSIGNMENT_SCHEMA
    )
    return tmp / "judged.parquet", tmp / "problems.parquet", tmp / "splits"


def test_stage_is_byte_identical_and_cached(tmp_path: Path) -> None:
    judged = synthetic_judged(8_000, n_problems=120, seed=5)
    problems, assignments = synthetic_problems(120, seed=5)
    inputs = _write_inputs(tmp_path, judged, problems, assignments)
    a = assemble(*inputs, tmp_path / "a", AssembleConfig(seed=1))
    b = assemble(*inputs, tmp_path / "b", AssembleConfig(seed=1))
    assemble(*inputs, tmp_path / "c", AssembleConfig(seed=2))
    assert a == b
    written = sorted(p.name for p in (tmp_path / "a").glob("*.parquet"))
    assert written == sorted(
        ["quarantine.parquet", "train.parquet"]
        + [f"{n}{t}.parquet" for n in ("heldout", "strong", "hard") for t in ("", ".test")]
    )
    for name in written:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    for name in ("train.parquet", "heldout.parquet", "heldout.test.parquet"):
        assert (tmp_path / "a" / name).read_bytes() != (tmp_path / "c" / name).read_bytes()
    assert pq.read_schema(tmp_path / "a" / "train.parquet").names[:3] == [
        "prompt_id",
        "query",
        "generator",
    ]
    # A second run with the same key executes nothing (the file is not rewritten).
    mtime = (tmp_path / "a" / "train.parquet").stat().st_mtime_ns
    assert assemble(*inputs, tmp_path / "a", AssembleConfig(seed=1)) == a
    assert (tmp_path / "a" / "train.parquet").stat().st_mtime_ns == mtime


def test_assemble_stage_writes_what_its_outputs_name(tmp_path: Path) -> None:
    """ASSEMBLE through the runner: the files it leaves (its marker aside) are exactly its
    `outputs()`, and the wrapper's splits folder hands it the assignments alone."""
    judged = synthetic_judged(3_000, n_problems=60, seed=7)
    problems, assignments = synthetic_problems(60, seed=7)
    judged_path, problems_path, splits_dir = _write_inputs(tmp_path, judged, problems, assignments)
    assert split_tables(splits_dir) == [splits_dir / "assignments.parquet"]
    cfg = AssembleConfig(seed=1)
    inputs = {"judged": judged_path, "problems": problems_path, "splits": split_tables(splits_dir)}
    result = run_stage(ASSEMBLE, cfg, inputs, tmp_path / "out")
    written = {p for p in (tmp_path / "out").rglob("*") if p.is_file() and p.name != MARKER}
    assert written == set(ASSEMBLE.outputs(cfg, tmp_path / "out").values())
    assert not result.cached and result.stats["outputs"]["heldout"] == "heldout.parquet"
    assert run_stage(ASSEMBLE, cfg, inputs, tmp_path / "out").cached


def test_assemble_reads_train_and_heldout_tables_without_assignments(tmp_path: Path) -> None:
    """A splits folder without assignments.parquet: each row takes its table's split, and
    the rows are those the assignments give."""
    judged = synthetic_judged(3_000, n_problems=60, seed=8)
    problems, assignments = synthetic_problems(60, seed=8)
    inputs = _write_inputs(tmp_path, judged, problems, assignments)
    by_split = tmp_path / "by_split"
    for split in ("train", "heldout"):
        ids = assignments.filter(pl.col("split") == split).select("problem_id")
        write_parquet(problems.join(ids, on="problem_id").to_arrow(), by_split / f"{split}.parquet")
    assert split_tables(by_split) == [by_split / "train.parquet", by_split / "heldout.parquet"]
    a = assemble(*inputs, tmp_path / "a", AssembleConfig(seed=1))
    b = assemble(inputs[0], inputs[1], by_split, tmp_path / "b", AssembleConfig(seed=1))
    assert a == b
    for name in ("train.parquet", "heldout.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    (by_split / "heldout.parquet").unlink()
    with pytest.raises(FileNotFoundError, match="neither assignments.parquet nor heldout"):
        split_tables(by_split)


def test_config_round_trips_through_yaml(tmp_path: Path) -> None:
    path = tmp_path / "assemble.yaml"
    path.write_text(
        "seed: 3\ngrouping: mixed\nsplits:\n  - {name: train, size_targets: {2: 5, 5: 5}}\n"
    )
    cfg = AssembleConfig.from_yaml(path)
    assert cfg.grouping == "mixed" and cfg.splits[0].size_targets == {2: 5, 5: 5}
    path.write_text("splits:\n  - {name: train, size_targets: {6: 5}}\n")
    with pytest.raises(ValueError, match="size_targets"):
        AssembleConfig.from_yaml(path)


def test_example_configs_load() -> None:
    from pipeline.instances.adversarial.config import AdversarialConfig
    from pipeline.instances.dpo.config import DPOConfig

    root = Path(__file__).resolve().parents[2] / "configs" / "instances"
    written = AssembleConfig.from_yaml(root / "assemble.yaml")
    assert written.splits[0].size_targets == {n: 12500 for n in range(2, 6)}
    assert written.model_dump() == AssembleConfig().model_dump()  # every value is the default
    assert AssembleConfig.from_yaml(root / "assemble_demo.yaml").grouping == "language"
    adv = AdversarialConfig.from_yaml(root / "adversarial.yaml")
    # the files write out the (Aletheia) defaults; the judge section is the file's own
    assert adv.model_dump(exclude={"judge"}) == AdversarialConfig().model_dump(exclude={"judge"})
    mixed = AdversarialConfig.from_yaml(root / "adversarial_mixed.yaml")
    assert mixed.model_dump(exclude={"judge"}) == AdversarialConfig.mixed().model_dump(
        exclude={"judge"}
    )
    dpo = DPOConfig.from_yaml(root / "dpo.yaml")
    assert len(dpo.judges) == 4 and dpo.strong_judge == "verifier-strong"


def test_invariant_checks_catch_broken_rows(built: tuple[dict, list, dict]) -> None:
    import pyarrow as pa

    from schemas import INSTANCE_SCHEMA

    good = built[0]["train"].slice(0, 1).to_pylist()[0]
    pos = good["chosen_position"]
    other = (pos + 1) % good["num_candidates"]
    two_ac = dict(good, verdicts=["AC"] * good["num_candidates"])
    se = dict(good, verdicts=[("SE" if i == other else v) for i, v in enumerate(good["verdicts"])])
    wrong_letter = dict(good, chosen_answer="E" if good["chosen_answer"] != "E" else "A")
    short = dict(good, pass_rates=good["pass_rates"][:-1])
    table = pa.Table.from_pylist([good, two_ac, se, wrong_letter, short], schema=INSTANCE_SCHEMA)
    found = instance_violations(table)
    assert not any(m.startswith("row 0 ") for m in found)
    assert "verdicts does not hold exactly one AC" in " ".join(
        m for m in found if m.startswith("row 1 ")
    )
    assert any(m.startswith("row 2 ") and "SE" in m for m in found)
    assert any(m.startswith("row 3 ") and "chosen_answer" in m for m in found)
    assert any(m.startswith("row 4 ") and "pass_rates length" in m for m in found)


def test_the_demo_assembly_file_is_the_builds_section() -> None:
    """configs/instances/assemble_demo.yaml once drew Strong from references and mutants
    only, while the build also takes policy outputs (its Strong test split: 29 rows against
    the build's 34). Every value is now the build's `assemble:` section as the run config
    resolves it, but the build id, which the build derives from its whole run config (the
    only column that then differs)."""
    from pipeline.config import resolve_run_config

    root = Path(__file__).resolve().parents[2] / "configs"
    build = resolve_run_config(root / "demo.yaml").assemble
    alone = AssembleConfig.from_yaml(root / "instances" / "assemble_demo.yaml")
    assert alone.model_dump(exclude={"build_id"}) == build.model_dump(exclude={"build_id"})
    assert build.build_id.startswith("b_") and alone.build_id == "demo"
