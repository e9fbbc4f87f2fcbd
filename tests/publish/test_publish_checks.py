"""Publishing re-checks invariants 1, 2 and 6 and refuses, naming the offending rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.publish import InvariantViolation, build_hub_folder
from tests.publish.synthetic import rewrite


def _refused(build_dir: Path, tmp_path: Path) -> str:
    with pytest.raises(InvariantViolation) as e:
        build_hub_folder(build_dir, tmp_path / "hub")
    assert not (tmp_path / "hub").exists()  # nothing half-published
    return str(e.value)


def _edit_row(i: int, **changes):
    def mutate(rows: list[dict]) -> list[dict]:
        rows[i] = rows[i] | {k: (v(rows[i]) if callable(v) else v) for k, v in changes.items()}
        return rows

    return mutate


def test_two_correct_candidates_is_refused(build_dir: Path, tmp_path: Path) -> None:
    rewrite(build_dir, "heldout", _edit_row(2, verdicts=lambda r: ["AC"] * r["num_candidates"]))
    msg = _refused(build_dir, tmp_path)
    assert (
        "invariant 1" in msg
        and "heldout[2] i_heldout_" in msg
        and "candidates with verdict AC" in msg
    )


def test_sandbox_error_verdict_is_refused(build_dir: Path, tmp_path: Path) -> None:
    def se(r: dict) -> list[str]:
        v = list(r["verdicts"])
        v[(r["chosen_position"] + 1) % r["num_candidates"]] = "SE"
        return v

    rewrite(build_dir, "train", _edit_row(0, verdicts=se))
    assert "train[0]" in (msg := _refused(build_dir, tmp_path)) and "SE" in msg


def test_gold_letter_must_point_at_the_correct_candidate(build_dir: Path, tmp_path: Path) -> None:
    rewrite(
        build_dir,
        "strong",
        _edit_row(1, chosen_answer=lambda r: "E" if r["chosen_answer"] != "E" else "A"),
    )
    assert "strong[1]" in _refused(build_dir, tmp_path)


def test_problem_in_train_and_eval_is_refused(build_dir: Path, tmp_path: Path) -> None:
    rewrite(build_dir, "adv", _edit_row(3, problem_id="p_train0"))
    msg = _refused(build_dir, tmp_path)
    assert "invariant 2" in msg and "adv[3] p_train0" in msg


def test_near_duplicate_statement_across_the_wall_is_refused(
    build_dir: Path, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    train_query = pq.read_table(build_dir / "final/train.parquet").column("query")[0].as_py()
    # Same text with a couple of words changed, under a fresh problem id and cluster.
    rewrite(
        build_dir,
        "hard",
        _edit_row(0, problem_id="p_fresh", query=train_query.replace("Problem", "Task")),
    )
    msg = _refused(build_dir, tmp_path)
    assert "hard[0] p_fresh" in msg and "near-duplicate" in msg


def _train_query(build_dir: Path) -> str:
    import pyarrow.parquet as pq

    return pq.read_table(build_dir / "final/train.parquet").column("query")[0].as_py()


def _replace_words(text: str, positions: list[int]) -> str:
    words = text.split(" ")
    for p in positions:
        words[p] = f"zebra{p}"  # a word the synthetic vocabulary never uses
    return " ".join(words)


# The synthetic train statement is "Problem <i>: " + 60 words: 62 tokens in one sentence,
# so 58 word 5-grams. Replacing k words at least 5 apart removes 5k of them and adds 5k
# new ones: Jaccard = (58 - 5k) / (58 + 5k). k=2: 48/68 = 0.706; k=4: 38/78 = 0.487.
TWO_WORDS, FOUR_WORDS = [8, 20], [8, 20, 32, 44]


def test_near_duplicate_at_the_split_threshold_is_refused(build_dir: Path, tmp_path: Path) -> None:
    """Jaccard 0.706: a near-duplicate for the split stage (>= 0.7), so for publishing too."""
    near = _replace_words(_train_query(build_dir), TWO_WORDS)
    rewrite(build_dir, "hard", _edit_row(0, problem_id="p_fresh", query=near))
    msg = _refused(build_dir, tmp_path)
    assert "hard[0] p_fresh" in msg and "near-duplicate of train problem" in msg
    assert "Jaccard 0.71" in msg


def test_chain_of_near_duplicates_across_the_wall_is_refused(
    build_dir: Path, tmp_path: Path
) -> None:
    """train A ~ eval B ~ eval C, while A and C are far apart (0.487): C is in A's cluster."""
    a = _train_query(build_dir)
    b, c = _replace_words(a, TWO_WORDS), _replace_words(a, FOUR_WORDS)
    rewrite(build_dir, "hard", _edit_row(0, problem_id="p_b", query=b))
    rewrite(build_dir, "adv", _edit_row(0, problem_id="p_c", query=c))
    msg = _refused(build_dir, tmp_path)
    assert "hard[0] p_b" in msg and "adv[0] p_c" in msg
    assert "chain of near-duplicates (direct Jaccard 0.49)" in msg


def test_split_assignments_are_not_trusted(build_dir: Path, tmp_path: Path) -> None:
    """The re-check reads only the rows being published: with the split stage's
    assignments file deleted it still finds the near-duplicate, and a cluster that file
    claims (but the statements do not show) does not refuse a clean build."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.common.parquet import write_parquet
    from schemas import SPLIT_ASSIGNMENT_SCHEMA

    path = build_dir / "splits/assignments.parquet"
    rows = pq.read_table(path).to_pylist()
    for r in rows:
        if r["problem_id"] == "p_eval1":
            r["cluster_id"] = "k_p_train2"  # a false claim: the two statements differ
    write_parquet(
        pa.Table.from_pylist(rows, schema=SPLIT_ASSIGNMENT_SCHEMA), path, SPLIT_ASSIGNMENT_SCHEMA
    )
    stats = build_hub_folder(build_dir, tmp_path / "hub")
    disjoint = next(c for c in stats["checks"] if c["name"] == "train-eval-disjoint")
    assert disjoint["passed"] and disjoint["rows"] > 0

    path.unlink()
    rewrite(
        build_dir,
        "hard",
        _edit_row(
            0, problem_id="p_fresh", query=_replace_words(_train_query(build_dir), TWO_WORDS)
        ),
    )
    assert "hard[0] p_fresh" in _refused(build_dir, tmp_path / "again")


def test_publish_uses_the_split_stage_near_duplicate_definition() -> None:
    from pipeline.config import RunConfig
    from pipeline.publish.config import CheckConfig
    from pipeline.splits.config import SplitConfig

    assert CheckConfig().near_dup.dedup_params() == SplitConfig().dedup_params()
    assert SplitConfig().dedup_params().threshold == 0.7
    from pipeline.publish.stage import publish_config

    cfg = RunConfig.model_validate({"name": "t", "splits": {"threshold": 0.6, "shingle_size": 4}})
    near = publish_config(cfg).checks.near_dup
    assert (near.threshold, near.shingle_size) == (0.6, 4)


def test_missing_provenance_is_refused(build_dir: Path, tmp_path: Path) -> None:
    rewrite(
        build_dir, "mixed", _edit_row(4, candidate_generators=lambda r: [""] * r["num_candidates"])
    )
    rewrite(build_dir, "dpo", _edit_row(1, judge_model=""))
    msg = _refused(build_dir, tmp_path)
    assert "invariant 6" in msg and "mixed[4]" in msg and "dpo[1]" in msg and "judge_model" in msg


def test_dpo_chosen_must_pick_the_gold_letter(build_dir: Path, tmp_path: Path) -> None:
    rewrite(build_dir, "mixed_dpo", _edit_row(2, chosen=lambda r: r["rejected"]))
    assert "mixed_dpo[2]" in _refused(build_dir, tmp_path)


def test_dpo_rows_must_be_trl_conversational_pairs(build_dir: Path, tmp_path: Path) -> None:
    """TRL's conversational preference format: `prompt` ends in the user turn (a pre-fill
    left in the prompt would be closed and re-opened by the chat template), `chosen` and
    `rejected` are one assistant message each."""
    prefill = {"role": "assistant", "content": "<think>\n"}
    rewrite(build_dir, "dpo", _edit_row(1, prompt=lambda r: r["prompt"] + [prefill]))
    rewrite(build_dir, "mixed_dpo", _edit_row(0, rejected=lambda r: r["prompt"] + r["rejected"]))
    msg = _refused(build_dir, tmp_path)
    assert "dpo[1]" in msg and "prompt: its last message must be the user turn" in msg
    assert "mixed_dpo[0]" in msg and "rejected: must be one assistant message" in msg


def test_dpo_check_reads_answers_with_the_one_shared_rule() -> None:
    """The DPO check reads a response as the DPO builder, rewards and evaluation do: the first
    box after the last `</think>`, exactly one valid letter. Each row below is judged by hand
    from that rule (pipeline/common/answers.py); a "last box anywhere, letters upper-cased"
    reader (the check's old one) gets rows 1, 2, 4 and 7 wrong."""
    import pyarrow as pa

    from pipeline.instances.dpo import responses
    from pipeline.publish import checks

    think = "<think>\nB looks wrong, maybe \\boxed{A}\n</think>\n"
    rows = [  # (chosen, rejected, gold, k, refused?)
        (think + "\\boxed{B}", think + "\\boxed{A}", "B", 2, False),  # 0: box in thinking ignored
        (think + "\\boxed{B} or \\boxed{A}", "\\boxed{A}", "B", 2, False),  # 1: first box counts
        ("\\boxed{ b }", "\\boxed{A}", "B", 2, True),  # 2: not exactly a letter: no answer
        ("\\boxed{\\text{B}}", "\\boxed{A}", "B", 2, True),  # 3: wrapped letter is invalid
        ("\\boxed{B}", think + "\\boxed{B}\n\\boxed{A}", "B", 2, True),  # 4: rejected picks gold
        ("\\boxed{B}", "\\boxed{(B)}", "B", 2, False),  # 5: "(B)" is no answer, so not gold
        ("\\boxed{A}", "\\boxed{C}", "A", 2, False),  # 6: C is not an option of 2: invalid
        ("\\boxed{C}", "\\boxed{A}", "C", 2, True),  # 7: the gold letter itself out of range
    ]
    table = pa.table(
        {
            "instance_id": [f"i_{n}" for n in range(len(rows))],
            "prompt": [[{"role": "user", "content": "Which?"}]] * len(rows),
            "chosen": [[{"role": "assistant", "content": r[0]}] for r in rows],
            "rejected": [[{"role": "assistant", "content": r[1]}] for r in rows],
            "chosen_answer": [r[2] for r in rows],
            "rejected_answer": ["A" if r[2] != "A" else "B" for r in rows],
            "num_candidates": [r[3] for r in rows],
        }
    )
    result = checks.check_dpo_pairs({"dpo": table})
    assert result.checked_rows == len(rows)
    assert sorted(v.row for v in result.violations) == [n for n, r in enumerate(rows) if r[4]]
    # One reader: the publish check and the DPO builder call the same function.
    assert checks.parse_answer is responses.parse_answer


def test_every_published_statement_of_a_train_problem_is_checked(
    build_dir: Path, tmp_path: Path
) -> None:
    """A train problem ships two texts: its instances' `query` and its Train-Questions `query`
    (the statement a policy is shown in RLVR). A near-duplicate of an eval statement in
    the second one leaks as much as in the first, so both are clustered."""
    import pyarrow.parquet as pq

    final = build_dir / "final"
    train_pid = pq.read_table(final / "train.parquet").column("problem_id")[0].as_py()
    heldout = pq.read_table(final / "heldout.parquet").to_pylist()
    eval_pid, eval_query = heldout[0]["problem_id"], heldout[0]["query"]
    questions = pq.read_table(final / "train_questions.parquet").column("problem_id").to_pylist()
    near = _replace_words(eval_query, TWO_WORDS)  # Jaccard 0.706 with the eval statement
    rewrite(build_dir, "train_questions", _edit_row(questions.index(train_pid), query=near))
    msg = _refused(build_dir, tmp_path)
    assert f"heldout[0] {eval_pid}" in msg
    assert f"near-duplicate of train problem {train_pid} (Jaccard 0.71)" in msg


def _rewrite_test_only(build_dir: Path, name: str, mutate) -> None:
    """Edit an evaluation config's `test` table alone (its full table untouched)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.common.parquet import write_parquet
    from schemas import INSTANCE_SCHEMA

    path = build_dir / "final" / f"{name}.test.parquet"
    rows = mutate(pq.read_table(path).to_pylist())
    write_parquet(pa.Table.from_pylist(rows, schema=INSTANCE_SCHEMA), path, INSTANCE_SCHEMA)


def test_a_test_row_must_be_a_row_of_full(build_dir: Path, tmp_path: Path) -> None:
    _rewrite_test_only(build_dir, "hard", _edit_row(1, instance_id="i_not_in_full"))
    msg = _refused(build_dir, tmp_path)
    assert "test-within-full" in msg and "hard/test[1] i_not_in_full" in msg
    assert "is not a row of the full split" in msg


def test_a_test_row_must_equal_its_full_row(build_dir: Path, tmp_path: Path) -> None:
    _rewrite_test_only(build_dir, "strong", _edit_row(0, query="another statement"))
    msg = _refused(build_dir, tmp_path)
    assert "strong/test[0]" in msg and "differs from its full-split row in ['query']" in msg


def test_invariants_are_checked_on_the_test_split_too(build_dir: Path, tmp_path: Path) -> None:
    two_ac = _edit_row(0, verdicts=lambda r: ["AC"] * r["num_candidates"])
    _rewrite_test_only(build_dir, "heldout", two_ac)
    msg = _refused(build_dir, tmp_path)
    assert "invariant 1" in msg and "heldout/test[0]" in msg
