"""Conformance: the last evaluation rules (issue 20 section 2; docs/aletheia-conformance.md,
rows E13-E18).

Aletheia: `src/evaluate_ckpt.py` (003feb8) takes `statistics.mode` over the raw box contents
and reports best-of-K as None at K = 1; `src/kendall_tau.py` (6373b05) scores -1 only where
tau-b is undefined; `src/ranking_consistency.py` (6373b05) keeps per-list NDCG and
transitivity. Expected values are worked out by hand in the comments, never by a second
call of our code.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from pipeline.evaluate.per_instance import instance_rows, write_instance_table
from pipeline.evaluate.protocol import (
    PairVerdict,
    RankedList,
    curve_ks,
    majority_pick,
    ranking_metrics,
)
from pipeline.evaluate.report import write_report
from pipeline.evaluate.responses import InstanceResponses
from pipeline.evaluate.score import score_split

NO_BOX = "I could not decide between them."


def box(content: str | None) -> str:
    """A Think response whose answer box holds `content` (None: a response with no box)."""
    return "<think>\nweighing the candidates\n</think>\n" + (
        NO_BOX if content is None else f"\\boxed{{{content}}}"
    )


def instance(iid: str, gold: str, pass_rates: list[float]) -> dict[str, Any]:
    n = len(pass_rates)
    return {
        "instance_id": iid,
        "prompt_id": f"p-{iid}",
        "problem_id": f"p-{iid}",
        "num_candidates": n,
        "chosen_answer": gold,
        "pass_rates": pass_rates,
        "adversarial": [None] * n,
    }


def listwise(*contents: str | None) -> InstanceResponses:
    return InstanceResponses(listwise=[box(c) for c in contents])


# -- E13: self-consistency over the raw box contents ------------------------------------------


def test_e13_majority_counts_each_distinct_raw_answer_as_its_own_vote() -> None:
    # The example: gold B among two candidates, boxes [A, C, B, none, B].
    # Raw contents A:1, C:1, B:2, none:1 -> mode B -> correct (Aletheia).
    # Merging the invalid ones (C and none) into one vote would give A:1, invalid:2, B:2,
    # invalid met first -> wrong: the rule this replaces.
    inst = [instance("x", "B", [0.0, 1.0])]
    m, _ = score_split(inst, {0: listwise("A", "C", "B", None, "B")})
    assert m["aletheia"]["majority_accuracy"] == 1.0
    assert m["aletheia"]["top1_accuracy"] == 0.0  # first response: A
    # statistics.mode semantics: a tie goes to the content met first ...
    assert majority_pick(["C", "A", "C", "A"]) == "C"
    # ... and two letters in one box are one answer: "AB" x2 beats "A" x1 (gold A: wrong)
    inst_a = [instance("y", "A", [1.0, 0.0])]
    m, _ = score_split(inst_a, {0: listwise("AB", "A", "AB")})
    assert m["aletheia"]["majority_accuracy"] == 0.0
    # our vote-share section keeps its own rule (valid answers only): A wins there
    assert m["vote_share"]["self_consistency_accuracy"] == 1.0


# -- E14: undefined tau-b only where tau-b is undefined ---------------------------------------


def test_e14_a_fully_reversed_list_is_a_defined_minus_one() -> None:
    pr = (1.0, 0.5, 0.0)
    # every pair won by the lower pass rate: wins (0, 1, 2) vs (1, .5, 0): 3 discordant
    # pairs, no ties -> tau-b = (0 - 3) / 3 = -1, a value
    reversed_ = (PairVerdict(0, 1, 1), PairVerdict(0, 2, 2), PairVerdict(1, 2, 2))
    # a cycle: every candidate wins once -> win counts all equal -> undefined (scored -1)
    cycle = (PairVerdict(0, 1, 0), PairVerdict(1, 2, 1), PairVerdict(0, 2, 2))
    m = ranking_metrics([RankedList(pr, reversed_), RankedList(pr, cycle)])
    assert m["kendall_tau_b"] == -1.0  # (-1 + -1) / 2: both score -1 in the mean
    assert m["kendall_tau_b_undefined"] == 1  # only the cycle (the old count said 2)
    # all pass rates equal: undefined as well
    flat = ranking_metrics([RankedList((0.5, 0.5, 0.5), reversed_)])
    assert (flat["kendall_tau_b"], flat["kendall_tau_b_undefined"]) == (-1.0, 1)


# -- E15: best-of-K is undefined at K = 1 -----------------------------------------------------


def test_e15_best_of_k_is_null_at_k_1(tmp_path: Path) -> None:
    inst = [instance("a", "A", [1.0, 0.0]), instance("b", "B", [0.0, 1.0])]
    m, _ = score_split(inst, {0: listwise("A"), 1: listwise("A")})
    a = m["aletheia"]
    assert a["k"] == 1 and (a["top1_accuracy"], a["majority_accuracy"]) == (0.5, 0.5)
    assert math.isnan(a["best_of_k_accuracy"])  # evaluate_ckpt.py: "BoN": None when K == 1
    assert math.isnan(m["vote_share"]["best_of_n_accuracy"])
    assert math.isnan(m["baselines"]["random"]["aletheia"]["best_of_k_accuracy"])
    write_report({"model": "m", "config": {"k": 1, "style": "think"}, "splits": {"h": m}}, tmp_path)
    on_disk = json.loads((tmp_path / "report.json").read_text())["splits"]["h"]["aletheia"]
    assert on_disk["best_of_k_accuracy"] is None
    assert on_disk["sc_curve"] == [
        {"k": 1, "instances": 2, "majority_accuracy": 0.5, "best_of_k_accuracy": None}
    ]
    # with K = 2 it is a number again: a) [A, B] has A -> 1; b) [A, A] has no B -> 0
    m2, _ = score_split(inst, {0: listwise("A", "B"), 1: listwise("A", "A")})
    assert m2["aletheia"]["best_of_k_accuracy"] == 0.5


# -- E16: self-consistency curves --------------------------------------------------------------


def test_e16_self_consistency_curve_in_the_report_and_a_plot_per_split(tmp_path: Path) -> None:
    # every k from 1 to K (the paper's curves: 1..8), not the powers of two
    assert curve_ks(1) == [1] and curve_ks(8) == [1, 2, 3, 4, 5, 6, 7, 8]
    inst = [instance("one", "A", [1.0, 0.5, 0.0]), instance("two", "B", [0.0, 1.0])]
    grouped = {
        0: listwise("B", "C", "A", "A", "A", "B"),
        1: listwise(None, "B", None, "F", "B", "B"),
    }
    m, _ = score_split(inst, grouped)
    # one (gold A): k=1 [B] wrong | k=2 [B,C] tie -> B wrong, best 0 | k=3 [B,C,A] all tied
    #   -> B wrong, best 1 | k=4 [B,C,A,A] -> A right | k=5 A:3 -> right | k=6 A:3 B:2 C:1
    #   -> right (best 1 from k=3 on)
    # two (gold B): k=1 [none] wrong | k=2 [none,B] tie -> none wrong, best 1 | k=3
    #   none:2 B:1 -> wrong | k=4 none:2 B:1 F:1 -> wrong | k=5 none:2 B:2 F:1, tie to the
    #   first met (none) -> wrong | k=6 none:2 B:3 F:1 -> right (best 1 from k=2 on)
    #   (merging none and F would give invalid:3 B:3, invalid first: wrong)
    assert m["aletheia"]["sc_curve"][1:] == [
        {"k": 2, "instances": 2, "majority_accuracy": 0.0, "best_of_k_accuracy": 0.5},
        {"k": 3, "instances": 2, "majority_accuracy": 0.0, "best_of_k_accuracy": 1.0},
        {"k": 4, "instances": 2, "majority_accuracy": 0.5, "best_of_k_accuracy": 1.0},
        {"k": 5, "instances": 2, "majority_accuracy": 0.5, "best_of_k_accuracy": 1.0},
        {"k": 6, "instances": 2, "majority_accuracy": 1.0, "best_of_k_accuracy": 1.0},
    ]
    first = m["aletheia"]["sc_curve"][0]
    assert (first["k"], first["instances"], first["majority_accuracy"]) == (1, 2, 0.0)
    assert math.isnan(first["best_of_k_accuracy"])
    assert m["aletheia"]["majority_accuracy"] == 1.0  # maj@K is the curve's last point
    # the random verifier: maj@k = mean 1/n = (1/3 + 1/2) / 2 = 5/12 at every k;
    # best-of-2 = ((1 - (2/3)^2) + (1 - (1/2)^2)) / 2 = (5/9 + 3/4) / 2 = 47/72
    rnd = m["baselines"]["random"]["aletheia"]["sc_curve"]
    assert [p["k"] for p in rnd] == [1, 2, 3, 4, 5, 6]
    assert all(p["majority_accuracy"] == pytest.approx(5 / 12) for p in rnd)
    assert rnd[1]["best_of_k_accuracy"] == pytest.approx(47 / 72)

    report = {"model": "m", "config": {"k": 6, "style": "think"}, "splits": {"heldout": m}}
    write_report(report, tmp_path)
    png = tmp_path / "sc_curve_heldout.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (tmp_path / "report.md").read_text()
    assert "## Self-consistency curves" in md and "![self-consistency curve, heldout]" in md
    assert "| 1 | 2 | 0.000 | - | 0.417 | - |" in md  # best-of-1 undefined on both sides
    assert "| 3 | 2 | 0.000 | 1.000 |" in md and "| 6 | 2 | 1.000 | 1.000 |" in md
    # the same numbers give the same PNG bytes (no timestamp in the file)
    again = tmp_path / "again"
    write_report(report, again)
    assert (again / "sc_curve_heldout.png").read_bytes() == png.read_bytes()


# -- E17: per-list tau-b, NDCG and transitivity in a per-instance table ------------------------


def _pairs(answers: dict[tuple[int, int], str | None]) -> dict[tuple[int, int], str]:
    return {pair: box(a) for pair, a in answers.items()}


def test_e17_per_instance_table_holds_each_lists_ranking_metrics(tmp_path: Path) -> None:
    four = instance("four", "A", [1.0, 0.5, 0.25, 0.0])
    rev = instance("rev", "A", [1.0, 0.5, 0.0])
    cyc = instance("cyc", "A", [1.0, 0.5, 0.0])
    two = instance("two", "B", [0.0, 1.0])
    grouped = {
        # (0,1) A: 0 wins | (0,2) A: 0 | (0,3) B: 3 beats 0 | (1,2) B: 2 beats 1
        # (1,3) no box: invalid | (2,3) A: 2 beats 3  -> wins (2, 0, 2, 1)
        0: InstanceResponses(
            listwise=[box("A"), box("B")],
            pairs=_pairs(
                {(0, 1): "A", (0, 2): "A", (0, 3): "B", (1, 2): "B", (1, 3): None, (2, 3): "A"}
            ),
        ),
        1: InstanceResponses(pairs=_pairs({(0, 1): "B", (0, 2): "B", (1, 2): "B"})),
        2: InstanceResponses(pairs=_pairs({(0, 1): "A", (1, 2): "A", (0, 2): "B"})),
        3: InstanceResponses(listwise=[box("B")]),
    }
    rows = instance_rows("heldout", [four, rev, cyc, two], grouped)
    path = write_instance_table(rows, tmp_path)
    got = {r["instance_id"]: r for r in pq.read_table(path).to_pylist()}

    f = got["four"]
    assert f["wins"] == [2, 0, 2, 1]
    # wins (2,0,2,1) vs pass (1,.5,.25,0): (0,1) C, (0,2) tie in wins, (0,3) C, (1,2) D,
    # (1,3) D, (2,3) C -> C=3, D=2, 1 tie of 6 pairs: tau-b = 1 / sqrt(5 * 6)
    assert f["kendall_tau_b"] == pytest.approx(1 / math.sqrt(30))
    assert f["kendall_tau_b_status"] == "defined"
    # ranking 0, 2, 3, 1 (equal wins keep list order) -> rels 1, .25, 0, .5; gain 2^r - 1
    dcg = 1 + (2**0.25 - 1) / math.log2(3) + 0 + (2**0.5 - 1) / math.log2(5)
    idcg = 1 + (2**0.5 - 1) / math.log2(3) + (2**0.25 - 1) / 2 + 0
    assert f["ndcg"] == pytest.approx(dcg / idcg)
    # triples: (0,1,2) 0>1, 0>2, 2>1 strict order; (0,2,3) 0>2, 3>0, 2>3 a cycle; the two
    # with pair (1,3) are not judged -> 1 of 2
    assert (f["transitive_triples"], f["triples_judged"], f["transitivity"]) == (1, 2, 0.5)
    # valid verdicts: (0,1) right, (0,2) right, (0,3) wrong, (1,2) wrong, (2,3) right
    assert (f["pairwise_correct"], f["pairwise_counted"]) == (3, 5)
    assert (f["pair_verdicts"], f["pair_verdicts_invalid"]) == (6, 1)
    # listwise: [A, B], gold A -> top-1 right; tie -> A first -> majority right; best-of-2
    assert f["answers"] == ["A", "B"] and f["majority_answer"] == "A"
    assert (f["top1_correct"], f["majority_correct"], f["best_of_k_correct"]) == (
        True,
        True,
        True,
    )

    r = got["rev"]  # wins (0, 1, 2) against (1, .5, 0): a defined -1
    assert (r["kendall_tau_b"], r["kendall_tau_b_status"]) == (-1.0, "defined")
    # ranking 2, 1, 0 -> rels 0, .5, 1
    dcg = 0 + (2**0.5 - 1) / math.log2(3) + 1 / 2
    idcg = 1 + (2**0.5 - 1) / math.log2(3) + 0
    assert r["ndcg"] == pytest.approx(dcg / idcg)
    assert (r["transitivity"], r["k"], r["answers"]) == (1.0, 0, None)

    c = got["cyc"]  # every candidate wins once: tau-b undefined (Aletheia scores -1)
    assert (c["kendall_tau_b"], c["kendall_tau_b_status"], c["wins"]) == (
        None,
        "undefined",
        [1, 1, 1],
    )
    assert (c["transitive_triples"], c["triples_judged"]) == (0, 1)

    t = got["two"]  # a list of 2 is not ranked; at K = 1 best-of-K is null
    assert (t["kendall_tau_b_status"], t["ndcg"], t["wins"]) == ("not_ranked", None, None)
    assert (t["top1_correct"], t["best_of_k_correct"]) == (True, None)
    assert [r["row"] for r in pq.read_table(path).to_pylist()] == [0, 1, 2, 3]


def test_e18_answers_are_free_by_default_and_constrained_only_on_request() -> None:
    """Aletheia samples its verifiers freely; `constrain_answer` (ours) restricts the box to
    the prompt's letters: a 3-candidate list offers A, B, C; each of its round-robin pairs
    (0,1), (0,2), (1,2) is a 2-candidate prompt offering A, B."""
    from pipeline.evaluate.config import EvalConfig
    from pipeline.evaluate.runner import eval_requests

    row = {
        "prompt_id": "p", "instance_id": "p-0", "query": "Print 1.", "num_candidates": 3,
        "candidates": ["print(1)", "print(2)", "print(3)"],
        "candidate_languages": ["python"] * 3,
    }  # fmt: skip
    free = eval_requests([row], "heldout", EvalConfig())
    assert EvalConfig().constrain_answer is False
    assert [q.answer_choices for q in free] == [None] * 4
    boxed = eval_requests([row], "heldout", EvalConfig(constrain_answer=True))
    assert [q.request_id for q in boxed] == [
        "heldout:0:list", "heldout:0:0,1", "heldout:0:0,2", "heldout:0:1,2",
    ]  # fmt: skip
    assert [q.answer_choices for q in boxed] == [["A", "B", "C"]] + [["A", "B"]] * 3
