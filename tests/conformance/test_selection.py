"""Conformance: which lists a group yields, the Train rules, the token caps and the candidate
pools (docs/aletheia-conformance.md, rows "selection", "Train", "length caps", "pools").

Expected counts are worked out by hand from Aletheia's `src/cerebrm_datagen.py` (`main`,
`pass_rates_and_filter`, `downsample_equalize_diversify`): for a group with k distinct
incorrect pass rates in the band, list sizes n = 2..min(k, 5) (nothing when k < 2), and per
size min(3, C(k, n-1)) lists (MAX_COMBOS_PER_LEN = 3).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import polars as pl
import pytest
import yaml

from pipeline.instances.assemble import assemble_frames
from pipeline.instances.combos import list_sizes
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.synthetic import judged_frame
from pipeline.instances.tokens import TokenizerUnavailable

REPO = Path(__file__).resolve().parents[2]
TOTAL = 20  # tests per problem: pass rate = passed / 20
NO_CAPS = {"max_candidate_tokens": None, "max_prompt_tokens": None}


def _problems(pids: list[str], split: str = "train") -> tuple[pl.DataFrame, pl.DataFrame]:
    from pipeline.instances.synthetic import synthetic_problems

    problems, _ = synthetic_problems(1)
    rows = [problems.row(0, named=True) | {"problem_id": p} for p in pids]
    return pl.DataFrame(rows, schema=problems.schema), pl.DataFrame(
        {"problem_id": pids, "split": [split] * len(pids)}
    )


def _group(pid: str, gen: str, passed: list[int], tier: str = "weak", **kw: object) -> list[dict]:
    """One AC program and one WA program per entry of `passed` (tests passed out of 20)."""
    rows = [
        {
            "problem_id": pid,
            "generator": gen,
            "tier": tier,
            "language": "python",
            "code": f"print('{pid}-{gen}-ok')",
            "verdict": "AC",
            "passed": TOTAL,
            **kw,
        }
    ]
    rows += [
        {
            "problem_id": pid,
            "generator": gen,
            "tier": tier,
            "language": "python",
            "code": f"print('{pid}-{gen}-{i}')",
            "verdict": "WA",
            "passed": p,
            **kw,
        }
        for i, p in enumerate(passed)
    ]
    return rows


def _build(rows: list[dict], pids: list[str], splits: list[SplitSpec], split: str = "train", **cfg):
    problems, assignments = _problems(pids, split)
    config = AssembleConfig(splits=splits, **{**NO_CAPS, **cfg})
    return assemble_frames(judged_frame(rows, total=TOTAL), problems, assignments, config)


@pytest.mark.parametrize(
    "k,sizes",
    [(0, []), (1, []), (2, [2]), (3, [2, 3]), (4, [2, 3, 4]), (5, [2, 3, 4, 5]), (9, [2, 3, 4, 5])],
)
def test_list_sizes_a_group_yields(k: int, sizes: list[int]) -> None:
    assert list_sizes(k, SplitSpec(name="train"), AssembleConfig()) == sizes
    pairs_only = [2] if k >= 2 else []
    assert list_sizes(k, SplitSpec(name="heldout", list_sizes=[2]), AssembleConfig()) == pairs_only
    # the listwise evaluation sets: the same sizes (listwise_eval_sets.py's `maxlen` loop)
    heldout = SplitSpec(name="heldout", problems="heldout")
    assert list_sizes(k, heldout, AssembleConfig()) == sizes


def test_one_group_with_five_easy_rates_gives_three_lists_per_size() -> None:
    # easy rates 0, .1, .2, .3, .5 (<= 0.5), plus .6 (no band) and .8, .85 (hard band)
    rows = _group("p1", "g", [0, 2, 4, 6, 10, 12, 16, 17])
    train = SplitSpec(name="train", problems="train")
    tables, _, _ = _build(rows, ["p1"], [train])
    got = tables["train"].to_pylist()
    # C(5,1)=5, C(5,2)=10, C(5,3)=10, C(5,4)=5 combinations: 3 drawn for each size
    assert Counter(r["num_candidates"] for r in got) == {2: 3, 3: 3, 4: 3, 5: 3}
    for r in got:
        wrong = [p for p in r["pass_rates"] if p != 1.0]
        assert len(set(wrong)) == len(wrong)  # one candidate per distinct rate
        assert set(wrong) <= {0.0, 0.1, 0.2, 0.3, 0.5}
        assert r["pass_rates"][r["chosen_position"]] == 1.0
    # three different rate sets per size (sampled without replacement)
    for n in (2, 3, 4, 5):
        sets = {tuple(sorted(r["pass_rates"])) for r in got if r["num_candidates"] == n}
        assert len(sets) == 3


def test_two_easy_rates_give_two_pairs_and_one_rate_gives_nothing() -> None:
    rows = _group("p1", "g", [0, 2]) + _group("p2", "g", [4])
    tables, _, _ = _build(rows, ["p1", "p2"], [SplitSpec(name="train")])
    got = tables["train"].to_pylist()
    assert [r["prompt_id"] for r in got] == ["p1", "p1"]  # min(3, C(2,1)) = 2 pairs
    assert {r["num_candidates"] for r in got} == {2}
    # our option: a single incorrect rate may make a pair
    tables, _, _ = _build(rows, ["p1", "p2"], [SplitSpec(name="train")], spare_incorrect_rates=0)
    assert Counter(r["prompt_id"] for r in tables["train"].to_pylist()) == {"p1": 3, "p2": 1}


def test_hard_pairs_need_two_distinct_hard_rates() -> None:
    # hard band 0.7..0.9 inclusive: rates .7, .9, .95 -> two hard rates (p1); .8 only (p2)
    rows = _group("p1", "g", [14, 18, 19]) + _group("p2", "g", [16, 16, 0])
    hard = SplitSpec(name="hard", band="hard", problems="heldout", list_sizes=[2])
    tables, _, _ = _build(rows, ["p1", "p2"], [hard], split="heldout")
    got = tables["hard"].to_pylist()
    assert len(got) == 2 and {r["prompt_id"] for r in got} == {"p1"}
    assert {p for r in got for p in r["pass_rates"]} == {1.0, 0.7, 0.9}


def test_strong_is_lists_of_policy_candidates_only() -> None:
    # 5 easy policy rates (0, .1, .2, .3, .5): sizes 2..5, min(3, C(5, n-1)) = 3 combinations
    # per size x 1 pick (listwise_eval_sets.py's strong-easy) = 12 lists; the reference
    # generator's 4 candidates (1 AC + 3 WA) are not policy outputs
    rows = _group("p1", "big", [0, 2, 4, 6, 10], tier="strong")
    rows += _group("p1", "ref", [1, 3, 5], tier="strong", origin="reference")
    strong = next(s for s in AssembleConfig().splits if s.name == "strong")
    tables, _, stats = _build(rows, ["p1"], [strong], split="heldout")
    got = tables["strong"].to_pylist()
    assert Counter(r["num_candidates"] for r in got) == {2: 3, 3: 3, 4: 3, 5: 3}
    assert {o for r in got for o in r["candidate_origins"]} == {"policy"}
    assert stats["splits"]["strong"]["origin_not_allowed"] == 4
    # the older pairs-only shape stays an option
    pairs = strong.model_copy(update={"list_sizes": [2]})
    tables, _, _ = _build(rows, ["p1"], [pairs], split="heldout")
    assert [r["num_candidates"] for r in tables["strong"].to_pylist()] == [2, 2, 2]


def test_train_keeps_prompt_ids_with_more_than_six_rows_per_size() -> None:
    # p1: 3 generators x 3 pairs = 9 rows of size 2 (and 9 of size 3) -> kept (> 6)
    # p2: 2 generators x 3 = 6 rows per size -> not more than 6 -> left out
    rows = [r for g in ("a", "b", "c") for r in _group("p1", g, [0, 2, 4])]
    rows += [r for g in ("a", "b") for r in _group("p2", g, [0, 2, 4])]
    train = next(s for s in AssembleConfig().splits if s.name == "train").model_copy(
        update={"size_targets": None}
    )
    assert train.min_rows_per_prompt_id == 7
    tables, _, stats = _build(rows, ["p1", "p2"], [train])
    got = tables["train"].to_pylist()
    assert Counter((r["prompt_id"], r["num_candidates"]) for r in got) == {
        ("p1", 2): 9,
        ("p1", 3): 9,
    }
    assert stats["splits"]["train"]["dropped_few_rows_per_prompt_id"] == 12


def test_size_targets_take_one_row_per_prompt_id_first() -> None:
    rows = [r for p in ("p1", "p2", "p3") for g in ("a", "b", "c") for r in _group(p, g, [0, 2, 4])]
    train = SplitSpec(name="train", size_targets={2: 3, 3: 4})
    tables, _, stats = _build(rows, ["p1", "p2", "p3"], [train])
    got = tables["train"].to_pylist()
    by_size = {n: Counter(r["prompt_id"] for r in got if r["num_candidates"] == n) for n in (2, 3)}
    assert by_size[2] == {"p1": 1, "p2": 1, "p3": 1}  # 3 ids, target 3: one each
    assert sorted(by_size[3].values()) == [1, 1, 2]  # every id once, then one more
    assert stats["splits"]["train"]["size_target_shortfall"] == {}
    tables, _, stats = _build(
        rows, ["p1", "p2", "p3"], [SplitSpec(name="train", size_targets={2: 30})]
    )
    assert tables["train"].num_rows == 27
    assert stats["splits"]["train"]["size_target_shortfall"] == {"2": 3}


def test_token_caps_with_a_local_tokenizer(tiny_model_dir: Path) -> None:
    long_code = "print(" + " + ".join(str(i) for i in range(2000)) + ")"
    rows = _group("p1", "g", [0, 2, 4])
    rows.append(
        {
            "problem_id": "p1",
            "generator": "g",
            "language": "python",
            "code": long_code,
            "verdict": "WA",
            "passed": 6,
        }
    )
    cfg = {"tokenizer": str(tiny_model_dir), "max_candidate_tokens": 800, "max_prompt_tokens": 4096}
    problems, assignments = _problems(["p1"])
    config = AssembleConfig(splits=[SplitSpec(name="train")], **cfg)
    tables, _, stats = assemble_frames(
        judged_frame(rows, total=TOTAL), problems, assignments, config
    )
    assert stats["token_caps"]["applied"] is True
    assert stats["input"]["candidates_over_token_cap"] == 1
    assert stats["splits"]["train"]["candidate_too_long"] == 1
    assert long_code not in {c for r in tables["train"].to_pylist() for c in r["candidates"]}
    # a prompt cap below any prompt's length drops every row
    config = AssembleConfig(splits=[SplitSpec(name="train")], **{**cfg, "max_prompt_tokens": 20})
    tables, _, stats = assemble_frames(
        judged_frame(rows, total=TOTAL), problems, assignments, config
    )
    assert tables["train"].num_rows == 0
    assert stats["splits"]["train"]["dropped_prompt_too_long"] == 6  # 3 pairs + 3 triples


def test_missing_tokenizer_skips_the_caps_or_fails_when_required() -> None:
    rows = _group("p1", "g", [0, 2])
    problems, assignments = _problems(["p1"])
    missing = str(REPO / "no-such-tokenizer")
    config = AssembleConfig(splits=[SplitSpec(name="train")], tokenizer=missing)
    tables, _, stats = assemble_frames(
        judged_frame(rows, total=TOTAL), problems, assignments, config
    )
    assert stats["token_caps"]["applied"] is False and missing in stats["token_caps"]["reason"]
    assert tables["train"].num_rows == 2
    with pytest.raises(TokenizerUnavailable, match="no-such-tokenizer"):
        assemble_frames(
            judged_frame(rows, total=TOTAL),
            problems,
            assignments,
            config.model_copy(update={"require_tokenizer": True}),
        )


ALETHEIA_WEAK = {
    "Llama-3.1-8B-Instruct",
    "Qwen2.5-Coder-7B-Instruct",
    "gemma-2-9b-it",
    "deepseek-coder-6.7b-instruct",
}
ALETHEIA_STRONG = {
    "Llama-3.1-70B-Instruct",
    "Qwen2.5-Coder-32B-Instruct",
    "gemma-2-27b-it",
    "deepseek-coder-33b-instruct",
}


@pytest.mark.parametrize(
    "pool,models,tier", [("weak", ALETHEIA_WEAK, "weak"), ("strong", ALETHEIA_STRONG, "strong")]
)
def test_real_scale_pools_are_aletheias_policy_models(
    pool: str, models: set[str], tier: str
) -> None:
    sources = yaml.safe_load((REPO / f"configs/pools/aletheia-{pool}.yaml").read_text())["sources"]
    assert {s["kind"] for s in sources} == {"model"}  # no reference solutions, no mutants
    assert {s["name"].split("/")[-1] for s in sources} == models
    assert {s["tier"] for s in sources} == {tier}


def test_prompt_cap_measures_the_users_template(tiny_model_dir: Path, tmp_path: Path) -> None:
    rows = _group("p1", "g", [0, 2])
    problems, assignments = _problems(["p1"])
    cfg = {"tokenizer": str(tiny_model_dir), "max_candidate_tokens": 800, "max_prompt_tokens": 4096}
    ours = AssembleConfig(splits=[SplitSpec(name="train")], **cfg)
    tables, _, _ = assemble_frames(judged_frame(rows, total=TOTAL), problems, assignments, ours)
    assert tables["train"].num_rows == 2
    padded = tmp_path / "padded.txt"  # a template far longer than 4096 tokens on its own
    padded.write_text("lorem ipsum " * 5000 + "{question}\n{candidates}\n{valid_options}")
    theirs = ours.model_copy(update={"prompt_template": str(padded)})
    tables, _, stats = assemble_frames(
        judged_frame(rows, total=TOTAL), problems, assignments, theirs
    )
    assert tables["train"].num_rows == 0
    assert stats["splits"]["train"]["dropped_prompt_too_long"] == 2
