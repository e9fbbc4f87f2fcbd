"""Conformance: prompt and DPO details (issue 20 section 3; docs/aletheia-conformance.md,
rows P1-P3).

- P1: Aletheia's Instruct prompt (`src/evaluate_ckpt.py` `_create_prompts_instruct`): the
  system turn is `LIST_REWARD_PROMPT_COT.format(valid_options=...)` unstripped (the constant
  starts and ends with a newline), the user turn an f-string with no `{valid_options}`.
- P2: the regeneration round (`src/thinkdpo_pairs.py` 1ef2ef9 lists the instances whose
  responses were all wrong or all right in `allwrong_indices.txt`; `thinkdpo_datagen.py
  --wrong-indices-file` samples them again with every model; the pairs script pools those
  responses with the first round's before choosing).
- P3: `chosen_answer` in Aletheia's `[[A]]` form (`src/cerebrm_datagen.py`'s answer list).

Templates are ours, in the same shape as Aletheia's (not its wording). Expected values are
written out by hand.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.common.answers import format_answer, gold_letter
from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.verifier_prompt import PromptSpec, TemplateError, build_messages
from pipeline.evaluate.config import EvalConfig
from pipeline.evaluate.runner import prompt_spec
from pipeline.instances.assemble import assemble_frames
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.dpo.config import DPOConfig, JudgeModelSpec
from pipeline.instances.dpo.stage import dpo_pairs, regeneration_reason, regeneration_targets
from pipeline.instances.synthetic import synthetic_judged, synthetic_problems
from schemas import INSTANCE_SCHEMA
from schemas.dpo import DPO_RESPONSE_SCHEMA, DPO_SCHEMA, turn_text

# -- P1: the Instruct prompt, reproduced exactly ------------------------------------------------

# Same shape as Aletheia's system constant: a leading and a trailing newline, {valid_options}
# once, the box written with doubled braces. Our own words.
SYSTEM = (
    "\nYou review programs written for a coding task. Exactly one of them is right.\n"
    "Choose among: {valid_options}. Write:\nReasoning: <your steps>\n"
    "Verdict: \\boxed{{X}}\nwith X your choice.\n"
)
# Same shape as Aletheia's Instruct user text: question and candidates, no {valid_options}.
USER = (
    "The task and its candidate programs follow:\n[QUESTION]\n{question}\n[/QUESTION]\n\n"
    "{candidates}\n\nKeep to the format exactly; nothing else is read.\n"
)


def test_p1_instruct_prompt_is_reproduced_exactly(tmp_path: Path) -> None:
    (tmp_path / "system.txt").write_text(SYSTEM)
    (tmp_path / "user.txt").write_text(USER)
    spec = PromptSpec(
        style="instruct",
        template=str(tmp_path / "user.txt"),
        system_template=str(tmp_path / "system.txt"),
    )
    msgs = build_messages("Add two numbers.", ["print(3)\n", "print(4)"], ["python"] * 2, spec)
    assert msgs == [
        {
            "role": "system",
            # verbatim: the leading and trailing newlines stay
            "content": "\nYou review programs written for a coding task. Exactly one of them "
            "is right.\nChoose among: A, B. Write:\nReasoning: <your steps>\n"
            "Verdict: \\boxed{X}\nwith X your choice.\n",
        },
        {
            "role": "user",
            # the code as stored (its trailing newline leaves a blank line before the fence,
            # as Aletheia's f-string does); the user turn stripped
            "content": "The task and its candidate programs follow:\n[QUESTION]\n"
            "Add two numbers.\n[/QUESTION]\n\n"
            "[CANDIDATE_A]\n```python\nprint(3)\n\n```\n[/CANDIDATE_A]\n\n"
            "[CANDIDATE_B]\n```python\nprint(4)\n```\n[/CANDIDATE_B]\n\n"
            "Keep to the format exactly; nothing else is read.",
        },
    ]
    # evaluation and DPO build the same turns from their configs
    eval_spec = prompt_spec(
        EvalConfig(
            style="instruct",
            prompt_template=str(tmp_path / "user.txt"),
            system_template=str(tmp_path / "system.txt"),
        )
    )
    dpo_spec = DPOConfig(
        variants=["instruct"],
        prompt_template=str(tmp_path / "user.txt"),
        system_template=str(tmp_path / "system.txt"),
    ).prompt_spec("instruct")
    for other in (eval_spec, dpo_spec):
        again = build_messages(
            "Add two numbers.", ["print(3)\n", "print(4)"], ["python"] * 2, other
        )
        assert again == msgs
    # {question} and {candidates} stay required in a user template
    (tmp_path / "no_candidates.txt").write_text("[QUESTION]\n{question}\n[/QUESTION]\n")
    with pytest.raises(TemplateError, match=r"missing placeholder\(s\) \['candidates'\]"):
        build_messages(
            "q",
            ["a", "b"],
            ["python"] * 2,
            PromptSpec(template=str(tmp_path / "no_candidates.txt")),
        )


# -- P2: the regeneration round ------------------------------------------------------------------


def test_p2_which_instances_are_sampled_again() -> None:
    # thinkdpo_pairs.py: reward max != 1 (none right) or reward min != 0 (all right)
    assert regeneration_reason([False, False, False, False]) == "no_correct_response"
    assert regeneration_reason([True, True]) == "every_response_correct"
    assert regeneration_reason([True, False, False]) is None
    assert regeneration_reason([]) == "no_correct_response"  # only backend errors came back


@pytest.fixture(scope="module")
def six_instances(tmp_path_factory: pytest.TempPathFactory) -> Path:
    judged = synthetic_judged(1_500, n_problems=30, seed=2)
    problems, assignments = synthetic_problems(30, seed=2)
    cfg = AssembleConfig(
        splits=[SplitSpec(name="train", size_targets={2: 2, 3: 2, 4: 2})], tokenizer=None
    )
    table = assemble_frames(judged, problems, assignments, cfg)[0]["train"]
    path = tmp_path_factory.mktemp("p2") / "train.parquet"
    write_parquet(table, path, INSTANCE_SCHEMA)
    return path


def _trace(reason: str, letter: str | None) -> str:
    return f"<think>\n{reason}\n</think>\n" + (f"\\boxed{{{letter}}}" if letter else "no idea")


def _responses(rows: list[dict], round_: str, answers: dict[int, list[str | None]]) -> list[dict]:
    out = []
    for i, picks in answers.items():
        for s, letter in enumerate(picks):
            out.append(
                {
                    "instance_id": rows[i]["instance_id"],
                    "prompt_id": rows[i]["prompt_id"],
                    "variant": "think",
                    "judge_model": "j",
                    "round": round_,
                    "sample_index": s,
                    "text": _trace(f"{round_} {i} {s}", letter),
                    "answer": letter,
                    "finish_reason": "stop",
                    "prompt_tokens": None,
                    "completion_tokens": None,
                }
            )
    return out


def _write(rows: list[dict], path: Path) -> Path:
    return write_parquet(pa.Table.from_pylist(rows, schema=DPO_RESPONSE_SCHEMA), path)


def test_p2_regenerated_responses_replace_the_gold_splice_and_are_counted(
    six_instances: Path, tmp_path: Path
) -> None:
    rows = read_parquet(six_instances, INSTANCE_SCHEMA).to_pylist()
    gold = [r["chosen_answer"] for r in rows]
    wrong = [next(a for a in "ABCDE" if a != g) for g in gold]
    # first round, one judge, two samples: instance 0 all wrong, instance 1 all right,
    # instances 2-5 one right and one wrong
    first = {0: [wrong[0], None], 1: [gold[1], gold[1]]} | {
        i: [gold[i], wrong[i]] for i in range(2, 6)
    }
    judges = _write(_responses(rows, "judges", first), tmp_path / "judges.parquet")
    assert regeneration_targets(rows, [judges], ["think"]) == {
        (rows[0]["instance_id"], "think"): "no_correct_response",
        (rows[1]["instance_id"], "think"): "every_response_correct",
    }
    # the regeneration round: instance 0 now answers right (twice), instance 1 once wrong
    again = {0: [gold[0], gold[0]], 1: [gold[1], wrong[1]]}
    regen = _write(_responses(rows, "regenerate", again), tmp_path / "regen.parquet")

    cfg = DPOConfig(judges=[JudgeModelSpec(name="j")], samples_per_judge=2)
    assert cfg.regenerates  # Aletheia's construction: on by default
    stats = dpo_pairs(six_instances, [judges, regen], tmp_path / "with", cfg)
    out = {
        r["instance_id"]: r for r in pq.read_table(tmp_path / "with" / "dpo.parquet").to_pylist()
    }
    # instance 0: its only correct responses are regenerated ones (the chosen is drawn from
    # the two), closed with the gold box; its rejected is one of its first-round answers
    zero = out[rows[0]["instance_id"]]
    assert zero["chosen_source"] == "regenerated"
    assert turn_text(zero["chosen"]) in {
        f"<think>\nregenerate 0 {s}\n</think>\n\\boxed{{{gold[0]}}}" for s in (0, 1)
    }
    assert turn_text(zero["rejected"]) in {
        _trace("judges 0 0", wrong[0]),
        _trace("judges 0 1", None),
    }
    # instance 1: the regeneration round gave it a rejected response (there was none)
    one = out[rows[1]["instance_id"]]
    assert turn_text(one["rejected"]) == _trace("regenerate 1 1", wrong[1])
    assert stats["pairs"] == 6
    assert stats["chosen_source"]["regenerated"] + stats["chosen_source"]["sampled"] == 6
    assert stats["chosen_source"]["gold_spliced"] == 0
    assert stats["regeneration"] == {
        "enabled": True,
        "sampled_again": {"every_response_correct": 1, "no_correct_response": 1},
        "rows_with_regenerated_chosen": stats["chosen_source"]["regenerated"],
        "rows_with_regenerated_rejected": 1,
    }
    # instance 1's chosen is drawn from its three correct responses (two first-round, one
    # regenerated), so the route count is 1 or 2 depending on the draw, never 0
    assert 1 <= stats["chosen_source"]["regenerated"] <= 2

    # Without the regeneration round: instance 0 falls back to the gold splice, instance 1
    # has no rejected response and yields no pair.
    off = cfg.model_copy(update={"regenerate": False})
    assert not off.regenerates
    stats_off = dpo_pairs(six_instances, [judges], tmp_path / "without", off)
    rows_off = {
        r["instance_id"]: r for r in pq.read_table(tmp_path / "without" / "dpo.parquet").to_pylist()
    }
    assert rows_off[rows[0]["instance_id"]]["chosen_source"] == "gold_spliced"
    assert rows[1]["instance_id"] not in rows_off
    assert stats_off["chosen_source"] == {"sampled": 4, "regenerated": 0, "gold_spliced": 1}
    assert stats_off["instances_short_of_pairs"] == {
        "no_incorrect_response_from_rejected_judges": 1
    }
    assert stats_off["regeneration"]["sampled_again"] == {}
    # on_policy keeps its own recipe: no regeneration unless asked for
    assert not DPOConfig(construction="on_policy").regenerates
    assert DPOConfig(construction="on_policy", regenerate=True).regenerates
    assert DPO_SCHEMA.field("chosen_source").type == pa.string()


# -- P3: Aletheia's bracketed answer form --------------------------------------------------------


def test_p3_answer_forms() -> None:
    assert [format_answer(x, "bracketed") for x in ("A", "[[E]]", "invalid")] == [
        "[[A]]",
        "[[E]]",
        "invalid",
    ]
    assert [format_answer(x, "letter") for x in ("[[B]]", "C", "invalid")] == ["B", "C", "invalid"]
    assert [gold_letter(x) for x in ("[[D]]", "D", "[[AB]]", "invalid")] == [
        "D",
        "D",
        "[[AB]]",
        "invalid",
    ]


def test_p3_bracketed_publish_is_read_back_by_our_readers(tmp_path: Path) -> None:
    from pipeline.common.hub_folder import read_config
    from pipeline.evaluate.responses import InstanceResponses
    from pipeline.evaluate.score import score_split
    from pipeline.publish.config import PublishConfig
    from pipeline.publish.stage import build_hub_folder
    from pipeline.train.data import verifier_prompt_rows
    from tests.publish.synthetic import make_build

    build = make_build(tmp_path / "build")
    letters = build_hub_folder(build, tmp_path / "letters", PublishConfig())
    stats = build_hub_folder(build, tmp_path / "hub", PublishConfig(answer_format="bracketed"))
    assert all(c["passed"] for c in stats["checks"])  # the checks read [[A]] rows
    for name in ("train", "heldout", "dpo"):
        t = read_config(tmp_path / "hub", name).to_pylist()
        for r in t:
            # the hand rule: [[X]] with X the letter at chosen_position
            assert r["chosen_answer"] == "[[" + "ABCDE"[r["chosen_position"]] + "]]"
            if name == "dpo":
                assert r["rejected_answer"] == "invalid" or (
                    r["rejected_answer"].startswith("[[") and r["rejected_answer"].endswith("]]")
                )
                assert turn_text(r["chosen"]).endswith(
                    "\\boxed{" + "ABCDE"[r["chosen_position"]] + "}"
                )
    # the card counts correct positions the same way in both forms
    card = (tmp_path / "hub" / "README.md").read_text()
    assert (
        card.split("## Counts")[1].split("##")[0]
        == ((tmp_path / "letters" / "README.md").read_text().split("## Counts")[1].split("##")[0])
    )
    train = read_config(tmp_path / "hub", "train").to_pylist()
    heldout_rows = read_config(tmp_path / "hub", "heldout").to_pylist()
    by_pos: dict[str, int] = {}
    for r in train:
        letter = "ABCDE"[r["chosen_position"]]
        by_pos[letter] = by_pos.get(letter, 0) + 1
    pos_cells = " / ".join(str(by_pos.get(a, 0)) for a in "ABCDE")
    train_line = next(line for line in card.splitlines() if line.startswith("| train |"))
    assert train_line.endswith(f"| {pos_cells} |")
    # training reads the gold letter
    grpo = verifier_prompt_rows(
        read_config(tmp_path / "hub", "train"), PromptSpec(style="instruct"), None
    )
    assert grpo["chosen_answer"] == ["ABCDE"[r["chosen_position"]] for r in train]
    # evaluation: responses boxing the letter at chosen_position are all right
    grouped = {
        i: InstanceResponses(listwise=["\\boxed{" + "ABCDE"[r["chosen_position"]] + "}"] * 2)
        for i, r in enumerate(heldout_rows)
    }
    m, _ = score_split(heldout_rows, grouped)
    assert (m["aletheia"]["top1_accuracy"], m["aletheia"]["majority_accuracy"]) == (1.0, 1.0)
    assert letters["rows"] == stats["rows"]


def test_p2_the_card_counts_rows_per_route(tmp_path: Path) -> None:
    from pipeline.publish.config import PublishConfig
    from pipeline.publish.stage import build_hub_folder
    from tests.publish.synthetic import make_build, rewrite

    build = make_build(tmp_path / "build")  # 6 dpo rows, all `sampled`

    def routes(rows: list[dict]) -> list[dict]:
        sources = ["sampled", "regenerated", "regenerated", "gold_spliced", "sampled", "sampled"]
        return [r | {"chosen_source": s} for r, s in zip(rows, sources, strict=True)]

    rewrite(build, "dpo", routes)
    build_hub_folder(build, tmp_path / "hub", PublishConfig())
    card = (tmp_path / "hub" / "README.md").read_text()
    assert "| config | rows | sampled | regenerated | gold_spliced |" in card
    assert "| dpo | 6 | 3 | 2 | 1 |" in card  # 3 sampled, 2 regenerated, 1 spliced
    assert "| mixed_dpo | 6 | 6 | 0 | 0 |" in card
