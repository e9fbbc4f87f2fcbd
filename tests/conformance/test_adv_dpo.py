"""Conformance: Adv / Mixed construction and DPO pairs (docs/aletheia-conformance.md).

Expected values are written out by hand from Aletheia's definitions (src/rq4_datagen.py,
src/thinkdpo_pairs.py, src/thinkdpo_datagen.py), not computed by our code. The Adv test
re-judges every edit in the real sandbox (marked docker).
"""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.common.answers import parse_answer
from pipeline.instances.adversarial.apply import apply_edits, sandbox_rejudge
from pipeline.instances.adversarial.config import AdversarialConfig
from pipeline.instances.dpo.aletheia import RejectedQuotas, close_with_answer, pick_pair
from pipeline.instances.dpo.config import DPOConfig
from pipeline.instances.dpo.responses import Response
from schemas.ids import candidate_id_for, problem_id_for
from schemas.problem import Problem, TestCase

# --------------------------------------------------------------------------- defaults


def test_adv_defaults_are_aletheias_six_types_one_per_row_one_copy_each() -> None:
    cfg = AdversarialConfig()
    assert cfg.construction == "per_row" and cfg.copy_per_bias and cfg.share == 1.0
    # rq4_datagen.main(): authority, self-declared correctness, authority reference (on
    # the rejected ones), reverse authority, misleading comments, self-declared
    # incorrectness (on the chosen one), in that order.
    assert cfg.bias_types == [
        "authority",
        "self_declared_correct",
        "fake_reference",
        "reverse_authority",
        "misleading_descriptive",
        "self_declared_incorrect",
    ]
    mixed = AdversarialConfig.model_validate({"split": "mixed"})
    assert (mixed.share, mixed.copy_per_bias, mixed.bias_types) == (0.25, False, None)


def test_dpo_defaults_are_aletheias() -> None:
    cfg = DPOConfig()
    # thinkdpo_datagen.py: K=4, temperature 0.6, max_tokens 16384, no constrained decoding;
    # thinkdpo_pairs.py: one pair per instance, Think prompt.
    assert (cfg.construction, cfg.samples_per_judge, cfg.temperature) == ("aletheia", 4, 0.6)
    assert (cfg.max_tokens, cfg.constrain_answer, cfg.variants) == (16384, False, ["think"])


# --------------------------------------------------------------------------- Adv rows

QUERY = "Read a word and print the number 3."
GOLD = "x = 3\nprint(x)\n"
WRONG = ["x = 4\nprint(x)\n", "x = 5\nprint(x)\n", "x = 6\nprint(x)\n"]


def _problem() -> Problem:
    return Problem(
        problem_id=problem_id_for("conformance", "three"),
        source="conformance",
        source_id="three",
        statement=QUERY,
        test_mode="stdio",
        tests=[TestCase(input=w + "\n", output="3\n") for w in ("a", "b")],
    )


def _row(chosen_position: int, instance_id: str) -> dict[str, Any]:
    codes = list(WRONG)
    codes.insert(chosen_position, GOLD)
    verdicts = ["AC" if c == GOLD else "WA" for c in codes]
    return {
        "prompt_id": _problem().problem_id,
        "query": QUERY,
        "generator": "reference:conformance",
        "language": "python",
        "num_candidates": 4,
        "candidates": codes,
        "chosen_position": chosen_position,
        "chosen_answer": "ABCD"[chosen_position],
        "pass_rates": [1.0 if v == "AC" else 0.0 for v in verdicts],
        "easy_hard": "easy",
        "weak_strong": "weak",
        "source": "conformance",
        "modification": None,
        "source_instance_id": None,
        "instance_id": instance_id,
        "problem_id": _problem().problem_id,
        "candidate_ids": [candidate_id_for("python", c) for c in codes],
        "candidate_origins": ["reference"] * 4,
        "candidate_generators": ["reference:conformance"] * 4,
        "candidate_languages": ["python"] * 4,
        "verdicts": verdicts,
        "adversarial": [None] * 4,
        "split": "heldout",
        "build_id": "b_conf",
    }


@pytest.mark.docker
def test_adv_one_bias_type_per_row_every_candidate_kept(sandbox_client: Any) -> None:
    rows = [_row(2, "i_row0"), _row(0, "i_row1")]
    cfg = AdversarialConfig()
    problems = {_problem().problem_id: _problem()}
    out, stats = apply_edits(rows, cfg, sandbox_rejudge(problems, sandbox_client, cfg))
    # Heldout copied once per bias type: 2 rows x 6 types = 12 rows, one block per type.
    assert len(out) == 12 and stats["rows_by_modification"] == {t: 2 for t in cfg.bias_types}
    assert [r["modification"] for r in out] == [t for t in cfg.bias_types for _ in (0, 1)]
    pro = {"authority", "self_declared_correct", "fake_reference"}
    for r in out:
        src = rows[0] if r["chosen_position"] == 2 else rows[1]
        gold = r["chosen_position"]
        # Every candidate kept (Aletheia's comprehension would leave 3 for a pro type and
        # 1 for an anti type); only the targets carry the row's type.
        assert r["num_candidates"] == len(r["candidates"]) == 4
        edited = [i for i in range(4) if r["candidates"][i] != src["candidates"][i]]
        if r["modification"] in pro:
            assert edited == [i for i in range(4) if i != gold]  # every rejected candidate
            headers = {r["candidates"][i].split("\n")[0] for i in edited}
            assert len(headers) == 1 and headers.pop().startswith("# ")  # the same edit
        else:
            assert edited == [gold]  # the chosen one only
        assert r["adversarial"] == [r["modification"] if i in edited else None for i in range(4)]
        assert r["verdicts"] == src["verdicts"] and r["pass_rates"] == src["pass_rates"]
        assert r["chosen_answer"] == src["chosen_answer"] and r["split"] == "adv"
        for i in edited:  # comment-only edits: without its comments, the original program
            code = [ln.split("  #")[0] for ln in r["candidates"][i].split("\n")]
            assert [ln for ln in code if not ln.startswith("#")] == src["candidates"][i].split("\n")
    assert stats["edits_accepted"] == stats["edits_planned"] == 2 * (3 * 3 + 3 * 1)


# --------------------------------------------------------------------------- DPO


@pytest.mark.parametrize(
    "trace,gold,expected",
    [
        # thinkdpo_pairs.add_answer_to_reasoning: keep up to the FIRST </think>, then
        # "</think>\n\boxed{gold}".
        (
            "<think>\nA looks right.</think>\nSo \\boxed{A}",
            "B",
            "<think>\nA looks right.</think>\n\\boxed{B}",
        ),
        ("<think>\nx</think>y</think>\\boxed{C}", "C", "<think>\nx</think>\n\\boxed{C}"),
        ("<think>\nran out of tokens", "A", "<think>\nran out of tokens</think>\n\\boxed{A}"),
    ],
)
def test_chosen_is_closed_with_the_gold_box(trace: str, gold: str, expected: str) -> None:
    assert close_with_answer(trace, gold) == expected


def _r(judge: str, text: str, k: int = 3, i: int = 0, finish: str = "stop") -> Response:
    return Response("i_x", "think", judge, i, text, parse_answer(text, k), finish)


def test_rejected_quotas_rotate_as_aletheias() -> None:
    # 7 instances, 3 judges: quota 7 // 3 = 2 each; most remaining first, ties in order.
    # Remaining before each pick: (2,2,2)->s (1,2,2)->m (1,1,2)->l (1,1,1)->s (0,1,1)->m
    # (0,0,1)->l (0,0,0)->s.
    quotas = RejectedQuotas.equal(["s", "m", "l"], 7)
    picked = []
    for n in range(7):
        rs = [_r("strong", "<think>\nok</think>\n\\boxed{A}")]
        rs += [_r(j, f"<think>\n{j}{n}</think>\n\\boxed{{B}}") for j in ("s", "m", "l")]
        pair, why = pick_pair(f"i_{n}", "think", "A", rs, "strong", quotas, seed=0)
        assert why is None and pair is not None
        picked.append(pair.rejected.judge_model)
    assert picked == ["s", "m", "l", "s", "m", "l", "s"]
    assert quotas.remaining == {"s": -1, "m": 0, "l": 0}


def test_next_judge_in_quota_order_when_the_first_has_no_wrong_response() -> None:
    quotas = RejectedQuotas.equal(["s", "m"], 4)
    rs = [_r("s", "<think>\nfine</think>\n\\boxed{A}"), _r("m", "<think>\nhm</think>\n\\boxed{C}")]
    pair, _ = pick_pair("i_1", "think", "A", rs, "m", quotas, seed=0)
    assert pair is not None and pair.rejected.judge_model == "m"
    assert quotas.remaining == {"s": 2, "m": 1}


def test_unparseable_response_counts_as_rejected_and_box_in_thinking_is_not_correct() -> None:
    quotas = RejectedQuotas.equal(["s"], 1)
    boxed_in_thinking = _r("s", "<think>\n\\boxed{A}</think>\nno final box")  # reward 0
    pair, why = pick_pair(
        "i_1",
        "think",
        "A",
        [boxed_in_thinking, _r("strong", "<think>\nB?</think>\n\\boxed{B}")],
        "strong",
        quotas,
        seed=0,
    )
    # Nobody is right, so the strong judge's reasoning gets the gold answer spliced in.
    assert why is None and pair is not None
    assert pair.chosen_source == "gold_spliced" and pair.chosen.judge_model == "strong"
    assert pair.chosen_text == "<think>\nB?</think>\n\\boxed{A}"
    assert pair.rejected is boxed_in_thinking and pair.rejected.answer is None


def test_a_correct_sample_of_any_judge_is_chosen_and_normalised() -> None:
    quotas = RejectedQuotas.equal(["s"], 1)
    right = _r("s", "<think>\nC works</think>\nThus \\boxed{C}.")
    wrong = _r("s", "<think>\nA</think>\n\\boxed{A}", i=1)
    pair, _ = pick_pair("i_1", "think", "C", [right, wrong], "strong", quotas, seed=0)
    assert pair is not None and pair.chosen_source == "sampled" and pair.chosen is right
    assert pair.chosen_text == "<think>\nC works</think>\n\\boxed{C}"
    assert pair.rejected is wrong


def test_no_strong_trace_and_nobody_right_yields_no_pair() -> None:
    quotas = RejectedQuotas.equal(["s"], 1)
    pair, why = pick_pair("i_1", "think", "A", [_r("s", "\\boxed{B}")], "strong", quotas, seed=0)
    assert pair is None and why == "no_correct_response_and_no_strong_trace"
