"""Conformance: the gold position is uniform per list size, and a `test` split is drawn
independently of it (issue 29, "Data"; docs/aletheia-conformance.md row D1), and the card
shows the position mix of every split (row D2).

The question: in the demo, Heldout's 2-candidate `test` rows had the gold at A in 11 of 12
(its `full` split: 78 A / 64 B), and Adv copies that test split six times. Aletheia's
`listwise_eval_sets.py` shuffles each list (`random.shuffle`) and `subsample_equal` samples
the test rows per (num_candidates, language) without looking at the position. Ours draw the
position from a seeded RNG (three mechanisms, one per construction) and the test rows by a
seeded hash of the list's id. If that holds, over many thousands of synthetic lists:

- in `full`, each of the n positions holds about 1/n of the size-n rows (chi-square
  goodness of fit, df = n - 1);
- whether a row is in `test` is independent of its position (chi-square test of the
  2 x n table in-test x position, df = n - 1), and `test` is uniform too.

Threshold: 3 constructions x 4 sizes x 3 tests = 36 p-values; each must exceed ALPHA =
1e-4, so under uniformity a seed would fail with probability at most 36 x 1e-4 < 0.4%
(Bonferroni). The seed is fixed, so the test is deterministic. Power: the same check
rejects a `test` split that leans 10% of its pairs toward gold A (asserted below), a much
smaller lean than 11 of 12. The demo's 11 of 12 has probability 2 x 13 / 2^12 = 0.6% under
uniformity; with a dozen small (split, size) cells in the demo's card, one that uneven turns
up in several percent of builds: chance, as these tests say.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy.stats import chi2_contingency, chisquare

from pipeline.instances.assemble import assemble_frames
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.synthetic import judged_frame, synthetic_problems
from pipeline.publish.card_positions import position_mix_line, uniform_position_p

ALPHA = 1e-4
TOTAL = 20  # tests per problem
LANGUAGES = ("python", "cpp")
TEST_PER_STRATUM = 500  # of 1,500 rows per (size, language): a third goes to test


def _group(pid: str, language: str) -> list[dict]:
    """Two correct programs and two wrong ones at each of six easy pass rates (0..5 of 20)."""
    q = '"' if language == "python" else ""
    base = {"problem_id": pid, "generator": "g", "tier": "weak", "language": language}
    rows = [
        base | {"code": f"print({q}{pid}-ok{i}{q})", "verdict": "AC", "passed": TOTAL}
        for i in range(2)
    ]
    rows += [
        base | {"code": f"print({q}{pid}-{p}-{j}{q})", "verdict": "WA", "passed": p}
        for p in range(6)
        for j in range(2)
    ]
    return rows


# construction -> (problems, split spec, assemble options): 12,000 lists each, 3,000 per size
CASES = {
    # Aletheia's listwise evaluation sets (the default for Heldout / Strong / Hard): 5
    # combinations x 3 picks per size from each group, `random.shuffle` per list
    "listwise_eval": (100, {}, {}),
    # the cerebrm_datagen.py construction on an eval split: 3 combinations per size,
    # `rng.randrange(n)` for the position
    "train": (500, {"construction": "train"}, {}),
    # our balanced selection: a seeded hash of the slot, modulo the size
    "balanced": (3000, {"max_instances_per_group": 2}, {"selection": "balanced"}),
}


def _assemble(case: str) -> tuple[list[dict], set[str]]:
    problems, spec_opts, cfg_opts = CASES[case]
    pids = [f"p{i}" for i in range(problems)]
    rows = [r for p in pids for lang in LANGUAGES for r in _group(p, lang)]
    template, _ = synthetic_problems(1)
    frame = pl.DataFrame(
        [template.row(0, named=True) | {"problem_id": p} for p in pids], schema=template.schema
    )
    assignments = pl.DataFrame({"problem_id": pids, "split": ["heldout"] * problems})
    spec = SplitSpec(
        name="heldout", problems="heldout", test_rows_per_stratum=TEST_PER_STRATUM, **spec_opts
    )
    config = AssembleConfig(
        splits=[spec], max_candidate_tokens=None, max_prompt_tokens=None, **cfg_opts
    )
    tables, _, _ = assemble_frames(judged_frame(rows, total=TOTAL), frame, assignments, config)
    full = tables["heldout"].to_pylist()
    test = {r["instance_id"] for r in tables["heldout.test"].to_pylist()}
    return full, test


def _table(full: list[dict], test: set[str], n: int) -> np.ndarray:
    """Rows of size n: [not in test, in test] x gold position."""
    obs = np.zeros((2, n), dtype=int)
    for r in full:
        if r["num_candidates"] == n:
            obs[int(r["instance_id"] in test), r["chosen_position"]] += 1
    return obs


def _p_values(obs: np.ndarray) -> dict[str, float]:
    return {
        "full uniform": float(chisquare(obs.sum(axis=0)).pvalue),
        "test independent": float(chi2_contingency(obs).pvalue),
        "test uniform": float(chisquare(obs[1]).pvalue),
    }


@pytest.mark.parametrize("case", list(CASES))
def test_d1_gold_position_is_uniform_and_independent_of_the_test_draw(case: str) -> None:
    full, test = _assemble(case)
    assert len(full) == 12_000  # many thousands of lists: 3,000 per size
    assert len(test) == 4 * len(LANGUAGES) * TEST_PER_STRATUM  # 4,000: a third of them
    for n in range(2, 6):
        obs = _table(full, test, n)
        assert obs.sum() == 3_000 and obs[1].sum() == 1_000
        p = _p_values(obs)
        assert min(p.values()) > ALPHA, (case, n, obs.tolist(), p)


def test_d1_the_check_catches_a_test_split_leaning_to_a() -> None:
    full, test = _assemble("listwise_eval")
    pairs = [r for r in full if r["num_candidates"] == 2]
    # swap 50 of the 1,000 test pairs with gold B (5% of the test) for pairs with gold A
    # outside it: a 10-point lean (about 55% A instead of 50%)
    out_b = [r["instance_id"] for r in pairs if r["instance_id"] in test and r["chosen_position"]]
    in_a = [
        r["instance_id"] for r in pairs if r["instance_id"] not in test and not r["chosen_position"]
    ]
    leaning = (test - set(out_b[:50])) | set(in_a[:50])
    p = _p_values(_table(full, leaning, 2))
    assert p["test independent"] < ALPHA and p["test uniform"] < 0.05, p
    # the demo's 11 of 12 A, on its own: binomial, two-sided, 2 x 13 / 4096
    assert uniform_position_p({2: {"A": 11, "B": 1}}) == pytest.approx(0.003892, rel=1e-3)


# -- D2: the card line ---------------------------------------------------------------------------


def test_d2_uniform_position_p_by_hand() -> None:
    # the numbers. Pairs 11 / 1: expected 6 each, chi-square (25 + 25) / 6 = 8.333,
    # df 1 -> p = 0.00389. Pairs 78 / 64: expected 71, (49 + 49) / 71 = 1.380 -> p = 0.240.
    # Both sizes pooled: 8.333 + 1.380 = 9.714 on df 2 -> p = exp(-9.714 / 2) = 0.00778.
    assert uniform_position_p({2: {"A": 11, "B": 1}}) == pytest.approx(0.0038924, rel=1e-4)
    assert uniform_position_p({2: {"A": 78, "B": 64}}) == pytest.approx(0.24005, rel=1e-4)
    pooled = uniform_position_p({2: {"A": 11, "B": 1}, 3: {"A": 78, "B": 64}})
    # size 3: 78 / 64 / 0, expected 47.33: (30.67^2 + 16.67^2 + 47.33^2) / 47.33 = 73.13
    assert pooled is not None and pooled < 1e-15
    assert uniform_position_p({}) is None


def test_d2_the_card_lists_the_position_mix_of_every_split(tmp_path: Path) -> None:
    from pipeline.common.hub_folder import read_config
    from pipeline.publish.config import PublishConfig
    from pipeline.publish.stage import build_hub_folder
    from schemas.dataset_configs import CONFIGS
    from tests.publish.synthetic import make_build

    build_hub_folder(make_build(tmp_path / "build"), tmp_path / "hub", PublishConfig())
    card = (tmp_path / "hub" / "README.md").read_text()
    section = card.split("### Gold position by list size")[1].split("\n## ")[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("- `")]
    expected = []
    for c in CONFIGS:
        if c.kind == "questions":
            continue
        for split in c.splits:
            rows = read_config(tmp_path / "hub", c.name, split=split).to_pylist()
            if not rows:
                continue
            # counted here from chosen_position (the card counts chosen_answer's letters)
            by_size: dict[int, Counter[int]] = {}
            for r in rows:
                by_size.setdefault(r["num_candidates"], Counter())[r["chosen_position"]] += 1
            mix = "; ".join(
                f"{n} cand. " + " / ".join(str(by_size[n][i]) for i in range(n))
                for n in sorted(by_size)
            )
            expected.append(f"- `{c.name}` / `{split}`: {mix}")
    assert [ln.split(" (p = ")[0] for ln in lines] == expected
    assert all(" (p = " in ln for ln in lines)
    assert {ln.split("`")[3] for ln in lines} == {"train", "test", "full"}  # every split
    # the line itself, on the numbers
    from pipeline.publish.card_facts import SplitFacts

    f = SplitFacts("heldout", "test", "instances", 12, 6, positions_by_size={2: {"A": 11, "B": 1}})
    assert position_mix_line(f) == "- `heldout` / `test`: 2 cand. 11 / 1 (p = 0.0039)"


def test_d2_adv_p_counts_each_source_row_once() -> None:
    """Adv holds one copy of each Heldout row per bias type (six), the gold at the same
    place: the p-value is over the distinct source rows (`source_instance_id`), not the
    copies. The issue's 11 / 1 Heldout pairs as six copies each: 66 / 6 over 72 rows."""
    import random

    import pyarrow as pa

    from pipeline.publish.card_facts import measure
    from schemas import INSTANCE_SCHEMA
    from tests.publish.synthetic import instance

    rng = random.Random(0)
    heldout = []
    for k in range(12):
        row = instance(rng, f"p{k}", "q", "heldout", k)
        n, pos = 2, 0 if k < 11 else 1
        heldout.append(row | {"num_candidates": n, "chosen_position": pos,
                              "chosen_answer": "AB"[pos], "candidates": row["candidates"][:n],
                              "pass_rates": [1.0 if j == pos else 0.0 for j in range(n)],
                              "verdicts": ["AC" if j == pos else "WA" for j in range(n)],
                              "candidate_ids": row["candidate_ids"][:n],
                              "candidate_origins": row["candidate_origins"][:n],
                              "candidate_generators": row["candidate_generators"][:n],
                              "candidate_languages": ["python"] * n, "language": "python",
                              "adversarial": [None] * n})  # fmt: skip
    biases = ["authority", "self_declared", "comments", "names", "style", "length"]
    adv = [
        r | {"instance_id": f"{r['instance_id']}-{b}", "source_instance_id": r["instance_id"],
             "modification": b, "split": "adv"}
        for r in heldout
        for b in biases
    ]  # fmt: skip
    f = measure("adv", "test", pa.Table.from_pylist(adv, schema=INSTANCE_SCHEMA))
    assert (f.rows, f.positions_by_size) == (72, {2: {"A": 66, "B": 6}})
    assert (f.source_rows, f.source_positions_by_size) == (12, {2: {"A": 11, "B": 1}})
    # 11 / 1: (25 + 25) / 6 = 8.333 on df 1 -> p = 0.0039; over the copies 66 / 6 would give
    # (900 + 900) / 36 = 50 -> p = 1.5e-12
    line = position_mix_line(f)
    assert line == "- `adv` / `test`: 2 cand. 66 / 6 (p = 0.0039 over 12 source rows)"
    # a split of distinct rows (Heldout itself) keeps the plain line
    h = measure("heldout", "test", pa.Table.from_pylist(heldout, schema=INSTANCE_SCHEMA))
    assert position_mix_line(h) == "- `heldout` / `test`: 2 cand. 11 / 1 (p = 0.0039)"
