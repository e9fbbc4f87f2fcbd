"""Conformance: Aletheia's listwise evaluation sets (src/listwise_eval_sets.py, commit
1431408; docs/aletheia-conformance.md, section "Listwise evaluation sets").

Every expected count is worked out by hand from that file, on small hand-built groups
(one problem + generator + language each). Its rules, as the comments below use them:
with k distinct incorrect pass rates in the band (easy: <= 0.5; hard: 0.7..0.9), a group
yields sizes n = 2..min(k, 5) (`for ith_len in range(1, maxlen)`, nothing when k < 2);
per size, C(k, n-1) rate combinations, of which Heldout (weak-easy) keeps up to 5, Strong
(strong-easy) up to 3 and Hard (weak-hard) all; per combination, the code picks are the
product (correct programs) x (one bucket per rate), of which Heldout keeps up to 3, Strong
1 and Hard 10. The `test` split (`subsample_equal`) keeps up to 250 rows per
(num_candidates, language).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from pipeline.instances.assemble import assemble_frames
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.synthetic import judged_frame, synthetic_problems

TOTAL = 20  # tests per problem: pass rate = passed / 20
NO_CAPS = {"max_candidate_tokens": None, "max_prompt_tokens": None}
HELDOUT = SplitSpec(name="heldout", problems="heldout")
STRONG = SplitSpec(name="strong", tier="strong", problems="heldout")
HARD = SplitSpec(name="hard", band="hard", problems="heldout")


def _group(
    pid: str,
    wrong: dict[int, int],
    *,
    correct: int = 1,
    gen: str = "g",
    tier: str = "weak",
    language: str = "python",
) -> list[dict]:
    """`correct` AC programs and, for each `passed: count` of `wrong`, that many distinct WA
    programs passing `passed` of the 20 tests."""
    q = '"' if language == "python" else ""
    base = {"problem_id": pid, "generator": gen, "tier": tier, "language": language}
    rows = [
        base | {"code": f"print({q}{pid}-{gen}-ok{i}{q})", "verdict": "AC", "passed": TOTAL}
        for i in range(correct)
    ]
    rows += [
        base | {"code": f"print({q}{pid}-{gen}-{p}-{j}{q})", "verdict": "WA", "passed": p}
        for p, count in wrong.items()
        for j in range(count)
    ]
    return rows


def _build(
    rows: list[dict], specs: list[SplitSpec], problems: dict[str, str], **cfg: object
) -> tuple[dict, dict]:
    """Assemble `rows` into `specs`; `problems` maps each problem id to its split."""
    template, _ = synthetic_problems(1)
    frame = pl.DataFrame(
        [template.row(0, named=True) | {"problem_id": p} for p in problems],
        schema=template.schema,
    )
    assignments = pl.DataFrame({"problem_id": list(problems), "split": list(problems.values())})
    config = AssembleConfig(splits=specs, **{**NO_CAPS, **cfg})  # type: ignore[arg-type]
    tables, _, stats = assemble_frames(judged_frame(rows, total=TOTAL), frame, assignments, config)
    return tables, stats


def _wrong_rates(row: dict) -> tuple[float, ...]:
    return tuple(sorted(p for i, p in enumerate(row["pass_rates"]) if i != row["chosen_position"]))


def test_the_draws_are_aletheias_per_set() -> None:
    # MAX_COMBOS_WEAKEASY 5 / MAX_PRODS_PER_LEN_WEAKEASY 3; MAX_COMBOS_STRONGEASY 3 /
    # MAX_PRODS_PER_LEN_STRONGEASY 1; weak-hard: every combination / MAX_PRODS_PER_LEN_WEAKHARD 10
    by_name = {s.name: s for s in AssembleConfig().splits}
    got = {n: (s.construction, s.combos_per_size, s.picks_per_combo) for n, s in by_name.items()}
    assert got == {
        "train": ("train", None, None),
        "heldout": ("listwise_eval", 5, 3),
        "strong": ("listwise_eval", 3, 1),
        "hard": ("listwise_eval", "all", 10),
    }
    for name in ("heldout", "strong", "hard"):
        s = by_name[name]
        assert (s.tier, s.band) == {
            "heldout": ("weak", "easy"),
            "strong": ("strong", "easy"),
            "hard": ("weak", "hard"),
        }[name]
        assert s.list_sizes is None  # lists of 2..5, not pairs
        assert s.apply_candidate_cap is False  # the 800-token cap is commented out there
        assert s.test_rows_per_stratum == 250  # subsample_equal(n=250)
    assert by_name["train"].apply_candidate_cap is True
    assert by_name["train"].test_rows_per_stratum is None
    with pytest.raises(ValueError, match="listwise_eval only"):
        SplitSpec(name="train", picks_per_combo=2)


def test_three_easy_rates_give_every_combination_once() -> None:
    # k = 3 (0, .1, .2): sizes 2..3; C(3,1) = 3 and C(3,2) = 3 combinations, all kept by
    # Heldout (<= 5) and Strong (<= 3); one program per bucket: one pick each -> 6 lists
    expected = {(0.0,), (0.1,), (0.2,), (0.0, 0.1), (0.0, 0.2), (0.1, 0.2)}
    for spec, tier in ((HELDOUT, "weak"), (STRONG, "strong")):
        rows = _group("p1", {0: 1, 2: 1, 4: 1}, tier=tier)
        tables, _ = _build(rows, [spec], {"p1": "heldout"})
        got = tables[spec.name].to_pylist()
        assert sorted(_wrong_rates(r) for r in got) == sorted(expected)
        assert Counter(r["num_candidates"] for r in got) == {2: 3, 3: 3}
        for r in got:  # the correct one wherever the shuffle put it
            assert r["pass_rates"][r["chosen_position"]] == 1.0
            assert r["verdicts"][r["chosen_position"]] == "AC"


def test_six_easy_rates_cap_combinations_and_sizes() -> None:
    # k = 6 (0, .05, .1, .15, .2, .25): sizes 2..min(6, 5) = 2..5 (never 6);
    # C(6,1)=6, C(6,2)=15, C(6,3)=20, C(6,4)=15 combinations: Heldout keeps 5 per size,
    # Strong 3; one pick each -> 20 and 12 lists, distinct rate sets within a size
    wrong = {0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1}
    for spec, tier, per_size in ((HELDOUT, "weak", 5), (STRONG, "strong", 3)):
        tables, _ = _build(_group("p1", wrong, tier=tier), [spec], {"p1": "heldout"})
        got = tables[spec.name].to_pylist()
        assert Counter(r["num_candidates"] for r in got) == {n: per_size for n in (2, 3, 4, 5)}
        for n in (2, 3, 4, 5):
            sets = [_wrong_rates(r) for r in got if r["num_candidates"] == n]
            assert len(set(sets)) == per_size  # combinations drawn without replacement
            assert all(len(set(s)) == n - 1 for s in sets)  # distinct rates in a list


def test_code_picks_per_combination() -> None:
    # 2 correct programs; rate 0 has 2 programs, rate .25 one: k = 2 -> pairs only.
    # Heldout: both combinations; picks = min(3, 2 x 2 = 4) = 3 for rate 0 and
    # min(3, 2 x 1) = 2 for rate .25 -> 5 distinct pairs. Strong: 1 pick each -> 2 pairs.
    rows = _group("p1", {0: 2, 5: 1}, correct=2)
    tables, _ = _build(rows, [HELDOUT], {"p1": "heldout"})
    got = tables["heldout"].to_pylist()
    assert Counter(_wrong_rates(r) for r in got) == {(0.0,): 3, (0.25,): 2}
    assert len({frozenset(r["candidate_ids"]) for r in got}) == 5  # no pick twice
    at_quarter = [r["candidate_ids"][r["chosen_position"]] for r in got if 0.25 in r["pass_rates"]]
    assert len(set(at_quarter)) == 2  # the two 0.25 picks: one per correct program
    strong_rows = _group("p1", {0: 2, 5: 1}, correct=2, tier="strong")
    tables, _ = _build(strong_rows, [STRONG], {"p1": "heldout"})
    assert Counter(_wrong_rates(r) for r in tables["strong"].to_pylist()) == {
        (0.0,): 1,
        (0.25,): 1,
    }


def test_hard_takes_every_combination_and_up_to_ten_picks() -> None:
    # 2 correct; hard rates .7 (1 program), .8 (6 programs), .9 (1 program): k = 3, sizes 2..3.
    # size 2: {.7}: 2x1 = 2 picks; {.8}: 2x6 = 12 -> 10; {.9}: 2 -> 14 lists
    # size 3: {.7,.8}: 2x1x6 = 12 -> 10; {.7,.9}: 2 -> 2; {.8,.9}: 12 -> 10 -> 22 lists
    # rates .2 and .95 are outside the hard band; .2 alone gives Heldout k = 1: nothing
    rows = _group("p1", {14: 1, 16: 6, 18: 1, 4: 1, 19: 1}, correct=2)
    tables, _ = _build(rows, [HARD, HELDOUT], {"p1": "heldout"})
    hard = tables["hard"].to_pylist()
    assert Counter(r["num_candidates"] for r in hard) == {2: 14, 3: 22}
    assert Counter(_wrong_rates(r) for r in hard) == {
        (0.7,): 2,
        (0.8,): 10,
        (0.9,): 2,
        (0.7, 0.8): 10,
        (0.7, 0.9): 2,
        (0.8, 0.9): 10,
    }
    assert len({tuple(sorted(r["candidate_ids"])) for r in hard}) == 36  # picks are distinct
    assert tables["heldout"].num_rows == 0


def test_band_edges() -> None:
    # rates 0, .5 (easy, inclusive), .55 and .65 (no band), .7, .9 (hard, inclusive), .95
    # -> easy k = 2 and hard k = 2: two pairs each, one per rate
    rows = _group("p1", {0: 1, 10: 1, 11: 1, 13: 1, 14: 1, 18: 1, 19: 1})
    tables, _ = _build(rows, [HELDOUT, HARD], {"p1": "heldout"})
    assert sorted(_wrong_rates(r) for r in tables["heldout"].to_pylist()) == [(0.0,), (0.5,)]
    assert sorted(_wrong_rates(r) for r in tables["hard"].to_pylist()) == [(0.7,), (0.9,)]


def test_one_generator_and_language_per_list() -> None:
    # two generators and two languages on one problem: four groups of k = 2 -> 2 pairs each
    rows = [
        r
        for gen in ("g1", "g2")
        for lang in ("python", "cpp")
        for r in _group("p1", {0: 1, 2: 1}, gen=gen, language=lang)
    ]
    tables, _ = _build(rows, [HELDOUT], {"p1": "heldout"})
    got = tables["heldout"].to_pylist()
    assert Counter((r["generator"], r["language"]) for r in got) == {
        (g, lang): 2 for g in ("g1", "g2") for lang in ("python", "cpp")
    }
    for r in got:
        assert set(r["candidate_generators"]) == {r["generator"]}
        assert set(r["candidate_languages"]) == {r["language"]}


def test_heldout_is_built_from_heldout_problems_only() -> None:
    # the same group on a Train problem yields no Heldout row (Train's prompt_ids excluded)
    rows = _group("p_train", {0: 1, 2: 1}) + _group("p_eval", {0: 1, 2: 1})
    tables, _ = _build(rows, [HELDOUT], {"p_train": "train", "p_eval": "heldout"})
    assert {r["prompt_id"] for r in tables["heldout"].to_pylist()} == {"p_eval"}


def test_the_correct_position_is_shuffled() -> None:
    # 60 problems x 3 easy rates: 180 pairs and 180 triples; a uniform shuffle puts the
    # correct one at each position of a pair 90 +- 3 sd (sd 6.7), of a triple 60 +- 3 sd (6.3)
    rows = [r for i in range(60) for r in _group(f"p{i}", {0: 1, 2: 1, 4: 1})]
    tables, _ = _build(rows, [HELDOUT], {f"p{i}": "heldout" for i in range(60)})
    got = tables["heldout"].to_pylist()
    for n, expected, sd in ((2, 90, 6.7), (3, 60, 6.3)):
        pos = Counter(r["chosen_position"] for r in got if r["num_candidates"] == n)
        assert set(pos) == set(range(n))
        assert all(abs(pos[p] - expected) <= 3 * sd for p in range(n)), pos


def test_candidate_cap_does_not_apply_but_the_prompt_cap_does(tiny_model_dir: Path) -> None:
    from transformers import AutoTokenizer

    long_code = "".join(f"value_{i} = {i} * {i}\n" for i in range(120))
    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    assert len(tok(long_code)["input_ids"]) > 800  # over Aletheia's candidate cap
    long_wrong = {"code": long_code, "verdict": "WA", "passed": 0}
    base = {"generator": "g", "tier": "weak", "language": "python"}
    rows = _group("p_eval", {2: 1, 4: 1}) + [base | long_wrong | {"problem_id": "p_eval"}]
    rows += _group("p_train", {2: 1, 4: 1}) + [base | long_wrong | {"problem_id": "p_train"}]
    caps = {"tokenizer": str(tiny_model_dir), "max_candidate_tokens": 800}
    train = SplitSpec(name="train", problems="train")
    problems = {"p_eval": "heldout", "p_train": "train"}
    tables, stats = _build(rows, [train, HELDOUT], problems, **caps, max_prompt_tokens=4096)
    # Heldout keeps the long program: k = 3 (0, .1, .2) -> 3 pairs + 3 triples, of which
    # {0}, {0,.1} and {0,.2} hold it. Train leaves it out: k = 2 -> 2 pairs, none with it.
    heldout = tables["heldout"].to_pylist()
    assert len(heldout) == 6 and sum(long_code in r["candidates"] for r in heldout) == 3
    assert [long_code in r["candidates"] for r in tables["train"].to_pylist()] == [False] * 2
    assert stats["splits"]["train"]["candidate_too_long"] == 1
    assert "candidate_too_long" not in stats["splits"]["heldout"]
    # the 4096-token prompt cap: a cap below every prompt drops all six Heldout rows
    tables, stats = _build(rows, [train, HELDOUT], problems, **caps, max_prompt_tokens=20)
    assert tables["heldout"].num_rows == 0
    assert stats["splits"]["heldout"]["dropped_prompt_too_long"] == 6


def test_test_split_takes_up_to_n_rows_per_size_and_language() -> None:
    # two groups (python, cpp) of k = 6: 5 lists per size 2..5 each = 40 rows in full;
    # test, at most 2 per (size, language): 2 x 4 sizes x 2 languages = 16 rows
    rows = _group("p1", {0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1})
    rows += _group("p1", {0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1}, language="cpp")
    spec = HELDOUT.model_copy(update={"test_rows_per_stratum": 2})
    tables, stats = _build(rows, [spec], {"p1": "heldout"})
    full, test = tables["heldout"].to_pylist(), tables["heldout.test"].to_pylist()
    assert len(full) == 40 and len(test) == 16
    assert Counter((r["num_candidates"], r["language"]) for r in test) == {
        (n, lang): 2 for n in (2, 3, 4, 5) for lang in ("python", "cpp")
    }
    by_id = {r["instance_id"]: r for r in full}
    assert all(by_id[r["instance_id"]] == r for r in test)  # the same rows as in full
    order = [r["instance_id"] for r in full if r["instance_id"] in {t["instance_id"] for t in test}]
    assert [r["instance_id"] for r in test] == order  # in full's (seeded) order
    assert stats["splits"]["heldout"]["test"]["rows"] == 16
    # Aletheia's 250: no stratum is over it here, so test holds every row
    tables, _ = _build(rows, [HELDOUT], {"p1": "heldout"})
    assert tables["heldout.test"].to_pylist() == tables["heldout"].to_pylist()


def test_pairs_stay_an_option() -> None:
    # k = 6 with list_sizes [2]: min(5, C(6,1) = 6) = 5 pairs, one pick each
    pairs = HELDOUT.model_copy(update={"list_sizes": [2]})
    tables, _ = _build(
        _group("p1", {0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1}), [pairs], {"p1": "heldout"}
    )
    assert [r["num_candidates"] for r in tables["heldout"].to_pylist()] == [2] * 5


def test_adv_is_built_from_heldouts_test_split() -> None:
    # rq4_datagen.py: `load_dataset("wetsoledrysoul/Heldout-Set")["test"]`
    from pipeline.common.graph import Done
    from pipeline.stages import adversarial_source

    outputs = Done({"train": "t.parquet", "heldout": "h.parquet", "heldout.test": "ht.parquet"})
    assert adversarial_source("adv", outputs) == "ht.parquet"
    assert adversarial_source("mixed", outputs) == "t.parquet"  # Mixed: from Train
    assert adversarial_source("adv", Done({"heldout": "h.parquet"})) == "h.parquet"


def test_the_demo_builds_listwise_sets_with_a_small_test_split() -> None:
    # configs/demo.yaml: Aletheia's constructions and draws, lists of 2..5 (no pairs-only
    # option), and a test split of 4 rows per (list size, language) instead of 250
    from pipeline.config import load_run_config

    repo = Path(__file__).resolve().parents[2]
    splits = {s.name: s for s in load_run_config(repo / "configs" / "demo.yaml").assemble.splits}
    for name, draws in (("heldout", (5, 3)), ("strong", (3, 1)), ("hard", ("all", 10))):
        s = splits[name]
        assert (s.construction, s.combos_per_size, s.picks_per_combo) == ("listwise_eval", *draws)
        assert s.list_sizes is None and s.test_rows_per_stratum == 4
