"""DPO pair cues (docs/aletheia-conformance.md, row DC1): how well a format or length cue
alone tells a chosen turn from its rejected one, measured per DPO config, warned about in
the build log and on the card above 90% of pairs, and `dpo.rejected_form`, which builds
pairs without the format cues (off by default: the demo's Parquet stays byte-identical).

Aletheia's `thinkdpo_pairs.py` closes every chosen trace with `</think>\\n\\boxed{gold}` and
keeps the rejected one as sampled; the demo's tiny judges never close their thinking, so its
`dpo` config has every chosen turn closed and no rejected one. Expected values by hand.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.common.answers import parse_answer
from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.instances.assemble import assemble_frames
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.dpo.aletheia import RejectedQuotas, pick_pair
from pipeline.instances.dpo.config import DPOConfig, JudgeModelSpec
from pipeline.instances.dpo.cues import cue_warnings, measure_cues
from pipeline.instances.dpo.responses import Response
from pipeline.instances.dpo.stage import dpo_pairs
from pipeline.instances.synthetic import synthetic_judged, synthetic_problems
from schemas import INSTANCE_SCHEMA
from schemas.dpo import DPO_RESPONSE_SCHEMA, turn_text

# The demo's shape: a judge's turn that never closes its thinking, a box inside it.
UNCLOSED = "<think>\nB looks right \\boxed{B}"


def test_cues_by_hand() -> None:
    chosen = [
        "<think>\nA handles zero \\boxed{A}</think>\n\\boxed{A}",  # closed, 2 boxes, 50 chars
        "<think>\nok</think>\n\\boxed{B}",  # closed, 1 box, 28 chars
        "<think>\nC</think>\n\\boxed{C}",  # closed, 1 box, 27 chars
        "<think>\nlong reasoning here</think>\n\\boxed{A}",  # closed, 1 box, 45 chars
    ]
    rejected = [
        "<think>\nB \\boxed{B}",  # open, 1 box, 19 chars
        "<think>\nA</think>\n\\boxed{A}",  # closed, 1 box, 27 chars
        "<think>\nno",  # open, 0 boxes, 10 chars
        "<think>\nx</think>\n\\boxed{B} \\boxed{C} and more text",  # closed, 2, 51 chars
    ]
    # "<think>\n" and "</think>" 8 characters each, "\boxed{A}" 9
    assert [len(t) for t in chosen + rejected] == [50, 28, 27, 45, 19, 27, 10, 51]
    think, boxes, length = measure_cues(chosen, rejected)
    # think closed: chosen 4/4, rejected 2/4; chosen higher on pairs 0 and 2, never lower
    assert (think.chosen_value, think.rejected_value) == (1.0, 0.5)
    assert (think.chosen_higher, think.chosen_lower, think.tied, think.separates) == (2, 0, 2, 0.5)
    # boxes: chosen 2, 1, 1, 1 (mean 1.25) vs 1, 1, 0, 2 (mean 1.0): higher 0 and 2, lower 3
    assert (boxes.chosen_value, boxes.rejected_value) == (1.25, 1.0)
    assert (boxes.chosen_higher, boxes.chosen_lower, boxes.separates) == (2, 1, 0.5)
    # length: 50 > 19, 28 > 27, 27 > 10, 45 < 51 -> 3 / 4 longer; medians (28 + 45) / 2 = 36.5
    # and (19 + 27) / 2 = 23; ratios 2.632, 1.037, 2.7, 0.882 -> median (1.037 + 2.632) / 2
    assert (length.chosen_higher, length.chosen_lower, length.separates) == (3, 1, 0.75)
    assert (length.chosen_value, length.rejected_value) == (36.5, 23.0)
    assert length.median_ratio == pytest.approx((28 / 27 + 50 / 19) / 2)


def test_a_warning_above_ninety_percent_only() -> None:
    nine = measure_cues(["<think>\na</think>\\boxed{A}"] * 9 + ["<think>\nb"],
                        ["<think>\nb"] * 10)  # fmt: skip
    assert nine[0].separates == 0.9 and not [
        w for w in cue_warnings("dpo", nine) if "</think>" in w
    ]
    ten = measure_cues(["<think>\na</think>\\boxed{A}"] * 10, ["<think>\nb"] * 10)
    lines = cue_warnings("dpo", ten)
    assert any(
        w.startswith("dpo: the cue closes `</think>` alone orders 100% of the 10") for w in lines
    )
    assert all("dpo.rejected_form: closed" in w for w in lines)


def _resp(judge: str, text: str, i: int) -> Response:
    return Response("i_1", "think", judge, i, text, parse_answer(text, 3), "stop")


@pytest.mark.parametrize(
    ("form", "rejected_texts"),
    [
        # Aletheia's: any incorrect response as written (this draw: the invalid one or B's)
        ("as_sampled", {"<think>\nI cannot tell", UNCLOSED}),
        ("answered", {UNCLOSED}),  # only a response that picked a (wrong) letter
        ("closed", {"<think>\nB looks right \\boxed{B}</think>\n\\boxed{B}"}),
    ],
)
def test_rejected_form(form: str, rejected_texts: set[str]) -> None:
    """Gold A; the strong judge answered A inside an unclosed think; the rejected judge wrote
    one turn with no answer and one picking B inside an unclosed think."""
    responses = [
        _resp("strong", "<think>\nA is right \\boxed{A}", 0),
        _resp("small", "<think>\nI cannot tell", 0),
        _resp("small", UNCLOSED, 1),
    ]
    seen = set()
    for seed in range(8):  # several draws: every rejected text the form allows turns up
        quotas = RejectedQuotas.equal(["small"], 1)
        pair, why = pick_pair("i_1", "think", "A", responses, "strong", quotas, seed,
                              rejected_form=form)  # type: ignore[arg-type]  # fmt: skip
        assert pair is not None and why is None
        seen.add(pair.rejected_text or pair.rejected.text)
        assert pair.chosen_text == "<think>\nA is right \\boxed{A}</think>\n\\boxed{A}"
    assert seen == rejected_texts
    # closed: the two turns share their form, so the format cues order no pair
    chosen = "<think>\nA is right \\boxed{A}</think>\n\\boxed{A}"
    think, boxes, _ = measure_cues([chosen], [next(iter(seen))])
    if form == "closed":
        assert (think.separates, boxes.separates) == (0.0, 0.0)
    else:
        assert think.separates == 1.0


def test_answered_without_a_wrong_letter_yields_no_pair() -> None:
    responses = [_resp("strong", "<think>\nA</think>\n\\boxed{A}", 0),
                 _resp("small", "<think>\nI cannot tell", 0)]  # fmt: skip
    quotas = RejectedQuotas.equal(["small"], 1)
    pair, why = pick_pair("i_1", "think", "A", responses, "strong", quotas, 0,
                          rejected_form="answered")  # fmt: skip
    assert (pair, why) == (None, "no_answered_incorrect_response_from_rejected_judges")


def test_rejected_form_is_off_by_default_and_for_aletheias_construction_only() -> None:
    cfg = DPOConfig()
    assert cfg.rejected_form == "as_sampled"
    assert "rejected_form" not in cfg.model_dump()  # the demo's stage keys and build id stay
    assert DPOConfig(rejected_form="closed").model_dump()["rejected_form"] == "closed"
    with pytest.raises(ValueError, match="rejected_form: closed is for construction aletheia"):
        DPOConfig(construction="on_policy", rejected_form="closed")


@pytest.fixture(scope="module")
def instances(tmp_path_factory: pytest.TempPathFactory) -> Path:
    judged = synthetic_judged(1_500, n_problems=30, seed=2)
    problems, assignments = synthetic_problems(30, seed=2)
    cfg = AssembleConfig(
        splits=[SplitSpec(name="train", size_targets={2: 2, 3: 2, 4: 2})], tokenizer=None
    )
    table = assemble_frames(judged, problems, assignments, cfg)[0]["train"]
    path = tmp_path_factory.mktemp("cues") / "train.parquet"
    write_parquet(table, path, INSTANCE_SCHEMA)
    return path


def _demo_like_responses(rows: list[dict], path: Path) -> Path:
    """Per instance one judge's two samples, as the demo's tiny judges write them: the gold
    and a wrong letter, each boxed inside an unclosed think."""
    out = []
    for r in rows:
        gold = r["chosen_answer"]
        wrong = next(a for a in "ABCDE" if a != gold)
        for s, letter in enumerate((gold, wrong)):
            out.append({"instance_id": r["instance_id"], "prompt_id": r["prompt_id"],
                        "variant": "think", "judge_model": "j", "round": "judges",
                        "sample_index": s, "text": f"<think>\nsample {s} \\boxed{{{letter}}}",
                        "answer": letter, "finish_reason": "stop", "prompt_tokens": None,
                        "completion_tokens": None})  # fmt: skip
    return write_parquet(pa.Table.from_pylist(out, schema=DPO_RESPONSE_SCHEMA), path)


def test_the_stage_measures_warns_and_closes_on_request(
    instances: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rows = read_parquet(instances, INSTANCE_SCHEMA).to_pylist()
    responses = _demo_like_responses(rows, tmp_path / "responses.parquet")
    cfg = DPOConfig(judges=[JudgeModelSpec(name="j")], samples_per_judge=2)
    with caplog.at_level(logging.WARNING, logger="pipeline.instances.dpo.stage"):
        stats = dpo_pairs(instances, [responses], tmp_path / "default", cfg)
    n = stats["pairs"]
    assert n == len(rows) == 6
    # every chosen turn closed (two boxes: the sample's and the gold), no rejected one
    assert stats["cues"]["think_closed"] == {
        "pairs": n, "chosen_higher": n, "chosen_lower": 0, "tied": 0, "separates": 1.0,
        "chosen": 1.0, "rejected": 0.0}  # fmt: skip
    assert (stats["cues"]["boxes"]["chosen"], stats["cues"]["boxes"]["rejected"]) == (2.0, 1.0)
    assert stats["rejected_form"] == "as_sampled"
    warned = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("dpo: the cue closes `</think>` alone orders 100%") for m in warned)
    assert any(m.startswith("dpo: the cue `\\boxed{}` count alone orders 100%") for m in warned)

    closed = cfg.model_copy(update={"rejected_form": "closed"})
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="pipeline.instances.dpo.stage"):
        stats_c = dpo_pairs(instances, [responses], tmp_path / "closed", closed)
    assert stats_c["pairs"] == n
    assert stats_c["cues"]["think_closed"]["separates"] == 0.0
    assert stats_c["cues"]["boxes"]["separates"] == 0.0
    assert not [r for r in caplog.records if "</think>" in r.getMessage()]
    before = pq.read_table(tmp_path / "default" / "dpo.parquet").to_pylist()
    after = pq.read_table(tmp_path / "closed" / "dpo.parquet").to_pylist()
    for a, b in zip(before, after, strict=True):
        wrong = b["rejected_answer"]
        assert a["rejected_answer"] == wrong and a["chosen"] == b["chosen"]
        assert turn_text(b["rejected"]) == f"{turn_text(a['rejected'])}</think>\n\\boxed{{{wrong}}}"


def test_the_card_shows_the_cue_table_and_warns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.publish.config import PublishConfig
    from pipeline.publish.stage import build_hub_folder
    from tests.publish.synthetic import make_build, rewrite

    build = make_build(tmp_path / "build")  # 6 dpo rows; make the rejected turns demo-like

    def unclosed(rows: list[dict]) -> list[dict]:
        def turn(w: str) -> list[dict]:
            return [{"role": "assistant", "content": f"<think>\n{w}? \\boxed{{{w}}}"}]

        return [r | {"rejected": turn(r["rejected_answer"])} for r in rows]

    rewrite(build, "dpo", unclosed)
    build_hub_folder(build, tmp_path / "hub", PublishConfig())
    card = (tmp_path / "hub" / "README.md").read_text()
    section = card.split("### DPO pair cues")[1].split("\n## ")[0]
    # dpo: chosen "<think>\nChecking each candidate...\n</think>\n\boxed{X}" (53 characters),
    # rejected "<think>\nX? \boxed{X}" with its wrong letter X (20); mixed_dpo keeps the
    # synthetic closed rejected turn "<think>\nI think so.\n</think>\n\boxed{X}" (38)
    assert "| dpo | closes `</think>` | 100% | 0% | 6 | 0 | 0 | **100%** |" in section
    assert "| dpo | `\\boxed{}` count | mean 1.00 | mean 1.00 | 0 | 0 | 6 | 0% |" in section
    assert ("| dpo | length (characters) | median 53 | median 20; median ratio 2.65 | 6 | 0 | 0 "
            "| **100%** |") in section  # fmt: skip
    assert "| mixed_dpo | closes `</think>` | 100% | 100% | 0 | 0 | 6 | 0% |" in section
    assert (
        '- **Warning:** in `dpo`, the cue "closes `</think>`" alone orders 100% of the 6 pairs'
        in section
    )
    assert "`dpo.rejected_form: closed`" in section
    # the command that prints the section for a published folder prints the card's
    from pipeline.publish.card_cues import main

    assert main([str(tmp_path / "hub")]) == 0
    assert capsys.readouterr().out.strip() == "### DPO pair cues" + section.rstrip()
