"""Conformance: Aletheia's two answer forms, its evaluation's answer rule, and its pair reading
(issue 29, "Answers and prompts"; docs/aletheia-conformance.md rows AF1-AF5).

Aletheia's code, as read (insait-institute/aletheia, `src/`):

- `cerebrm_prompts.py` `LIST_REWARD_PROMPT` asks for `\\boxed{[[X]]}`; `cerebrm_rewards.py`
  `list_reward` compares the first box after the last `</think>` with `chosen_answer`
  (`[[A]]` in those datasets), `list_format_reward` wants `\\boxed{[[A]]}`; the later
  `rewards.py` / `prompts.py` use the bare `\\boxed{A}`;
- `thinkdpo_pairs.py` `add_answer_to_reasoning*` close a trace with `</think>\\n\\boxed{` +
  `chosen_answer` + `}`, so `\\boxed{[[A]]}` in the cerebrm-era rows;
- `evaluate_ckpt.py` (003feb8) and `evaluate.py` (327c3d7) read the first box of the WHOLE
  completion (`re.search` on the text, no `</think>` split); `evaluate.py` unwraps
  `[[..]]` with `content.split("[[")[1].split("]]")[0]`;
- `ranking_consistency.py` `_interpret_answer`: `raw.strip().upper()`, then `A` or `B`.

Expected values are written out by hand from those definitions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.common.answers import pair_answer, parse_answer, raw_answer, well_formed
from pipeline.common.parquet import write_parquet
from pipeline.common.verifier_prompt import PromptSpec, build_messages
from pipeline.evaluate.config import EvalConfig
from pipeline.evaluate.responses import InstanceResponses
from pipeline.evaluate.runner import prompt_spec
from pipeline.evaluate.score import score_split
from pipeline.instances.dpo.config import DPOConfig, JudgeModelSpec
from pipeline.train.rewards import (
    accuracy_reward,
    format_reward,
    make_reward_funcs,
    rank_gap_reward,
)
from schemas import INSTANCE_SCHEMA
from schemas.dpo import DPO_RESPONSE_SCHEMA

THINK = "<think>\nweighing the candidates\n</think>\n"

# (response, candidates, the default rule's reading, the first_box rule's reading)
ANSWERS = [
    (THINK + "\\boxed{[[B]]}", 2, "B", "B"),  # cerebrm form: was invalid before
    (THINK + "\\boxed{B}", 2, "B", "B"),  # rewards.py form
    (THINK + "\\boxed{[[C]]}", 3, "C", "C"),
    (THINK + "\\boxed{[[C]]}", 2, None, None),  # C is no option of a pair
    (THINK + "\\boxed{[[ B ]]}", 2, None, None),  # " B " is no letter
    (THINK + "\\boxed{[[AB]]}", 2, None, None),
    (THINK + "\\boxed{[[b]]}", 2, None, None),  # case matters in a list
    (THINK + "\\boxed{[[A]}", 2, None, None),  # content "[[A]": not a form; split gives "A]"
    (THINK + "\\boxed{[A]}", 2, None, None),
    # evaluate.py's split drops text around the brackets; the exact reading does not
    (THINK + "\\boxed{Answer: [[C]]}", 3, None, "C"),
    # a box in the thinking: no answer after </think> vs the first box of the whole text
    ("<think>\nmaybe \\boxed{A}\n</think>\n\\boxed{[[B]]}", 2, "B", "A"),
    ("<think>\nmaybe \\boxed{[[A]]}\n</think>\nno box", 2, None, "A"),
    ("no box at all", 2, None, None),
]


@pytest.mark.parametrize("text,n,after_think,first_box", ANSWERS)
def test_af1_both_answer_forms_are_read(
    text: str, n: int, after_think: str | None, first_box: str | None
) -> None:
    assert parse_answer(text, n) == after_think
    assert parse_answer(text, n, rule="first_box") == first_box


def test_af1_the_vote_counts_the_unwrapped_answer() -> None:
    # statistics.mode over evaluate.py's unwrapped answers: [[A]] and A are one vote
    assert raw_answer(THINK + "\\boxed{[[A]]}") == "A"
    assert raw_answer(THINK + "\\boxed{A}") == "A"
    assert raw_answer(THINK + "\\boxed{[[F]]}") == "F"  # invalid, but its own vote
    assert raw_answer("no box") is None
    # gold A; answers [[A]], B, A: A has two votes -> maj right, top-1 right
    inst = [_instance("x", "A", [1.0, 0.0])]
    texts = [THINK + "\\boxed{[[A]]}", THINK + "\\boxed{B}", THINK + "\\boxed{A}"]
    m, _ = score_split(inst, {0: InstanceResponses(listwise=texts)})
    assert m["aletheia"]["top1_accuracy"] == 1.0  # before: the box "[[A]]" was wrong
    assert m["aletheia"]["majority_accuracy"] == 1.0  # before: [[A]], B, A all one vote, [[A]] won
    assert m["aletheia"]["invalid_rate"] == 0.0


@pytest.mark.parametrize(
    "text,n,style,ok",
    [
        # list_format_reward (cerebrm era): \boxed{[[A]]}; rewards.py: \boxed{A}; both pass
        ("<think>\nr\n</think>\n\\boxed{[[A]]}", 2, "think", True),
        ("<think>\nr\n</think>\\boxed{[[E]]}", 5, "think", True),
        ("<think>\nr\n</think>\n\\boxed{[[C]]}", 2, "think", False),  # C invalid for 2
        ("<think>\nr\n</think>\n\\boxed{[[A]}", 2, "think", False),
        ("<think>\nr\n</think>\n\\boxed{[A]}", 2, "think", False),
        ("Analysis: ...\nFinal Answer: \\boxed{[[B]]}", 2, "instruct", True),
    ],
)
def test_af1_format_check_takes_both_forms(text: str, n: int, style: str, ok: bool) -> None:
    assert well_formed(text, n, style) is ok  # type: ignore[arg-type]


def test_af1_rewards_read_both_forms_of_response_and_gold() -> None:
    right = "<think>\nr\n</think>\n\\boxed{[[B]]}"
    wrong = "<think>\nr\n</think>\n\\boxed{[[A]]}"
    # list_reward: 1 when the box is the gold answer, either form on either side
    assert [accuracy_reward(right, g, 2) for g in ("B", "[[B]]")] == [1.0, 1.0]
    assert [accuracy_reward(wrong, g, 2) for g in ("B", "[[B]]")] == [0.0, 0.0]
    assert format_reward(right, 2, "think") == 0.0
    # rank_gap (ours): the gold's pass rate 1.0 minus the pick's 0.25
    assert rank_gap_reward(wrong, "[[B]]", [0.25, 1.0]) == -0.75
    assert rank_gap_reward(right, "[[B]]", [0.25, 1.0]) == 1.0
    funcs = {
        f.__name__: f
        for f in make_reward_funcs(
            ["accuracy", "format"], style="think", budget=64, overlong_buffer=16
        )
    }
    got = funcs["accuracy"](
        completions=["r\n</think>\n\\boxed{[[B]]}", "r\n</think>\n\\boxed{A}"],
        chosen_answer=["[[B]]", "[[B]]"],
        num_candidates=[2, 2],
        prefill=["<think>\n", "<think>\n"],
    )
    assert got == [1.0, 0.0]


# -- AF2: Aletheia's evaluation rule as an option, named in the report ------------------------


def _instance(iid: str, gold: str, pass_rates: list[float]) -> dict[str, Any]:
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


def test_af2_first_box_rule_is_an_option_and_the_report_names_its_rule(tmp_path: Path) -> None:
    from pipeline.evaluate.run import evaluate
    from tests.train.rowgen import write_dataset

    data = write_dataset(tmp_path / "data")
    heldout = pq.read_table(next((data / "heldout").glob("test-*.parquet"))).to_pylist()
    # every response names the gold letter only inside its thinking, then boxes a wrong one
    lines = []
    for r in heldout:
        wrong = "ABCDE"[(r["chosen_position"] + 1) % r["num_candidates"]]
        text = f"<think>\nit is \\boxed{{{r['chosen_answer']}}}\n</think>\n\\boxed{{{wrong}}}"
        lines.append({"split": "heldout", "instance_id": r["instance_id"], "response": text})
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(json.dumps(x) + "\n" for x in lines))

    reports = {}
    for rule in ("after_think", "first_box"):
        cfg = EvalConfig(splits=["heldout"], k=1, answer_rule=rule)  # type: ignore[arg-type]
        reports[rule] = evaluate(None, data, tmp_path / rule, cfg, responses=responses)
    # after_think reads the wrong box after </think>: top-1 0; first_box the gold in the
    # thinking: top-1 1 (Aletheia's evaluate_ckpt.py would score these responses right)
    assert reports["after_think"]["splits"]["heldout"]["aletheia"]["top1_accuracy"] == 0.0
    assert reports["first_box"]["splits"]["heldout"]["aletheia"]["top1_accuracy"] == 1.0
    assert EvalConfig().answer_rule == "after_think"  # the default is the training reward's
    for rule in ("after_think", "first_box"):
        on_disk = json.loads((tmp_path / rule / "report.json").read_text())
        assert on_disk["answer_rule"]["rule"] == rule
        assert on_disk["config"]["answer_rule"] == rule
        md = (tmp_path / rule / "report.md").read_text()
        assert f"Answers read by the `{rule}` rule" in md
    # the per-instance table holds what each rule read
    table = pq.read_table(tmp_path / "first_box" / "instances.parquet").to_pylist()
    assert [t["answers"] for t in table] == [[r["chosen_answer"]] for r in heldout]


# -- AF3: pair answers, stripped and upper-cased ----------------------------------------------


def test_af3_pair_answers_are_stripped_and_upper_cased() -> None:
    assert [pair_answer(THINK + f"\\boxed{{{c}}}") for c in (" b ", "a", "B", "[[ a ]]")] == [
        "B",
        "A",
        "B",
        "A",
    ]
    assert [pair_answer(THINK + f"\\boxed{{{c}}}") for c in ("C", "AB", "")] == [None] * 3
    # a list of 3 (pass rates 1, .5, 0): pairs (0,1) " a " -> 0 wins (right), (0,2) "a" ->
    # 0 wins (right), (1,2) "B " -> 2 wins (wrong): 3 valid verdicts, pairwise 2/3; wins
    # (2, 0, 1) against (1, .5, 0): pairs (0,1) concordant, (0,2) concordant, (1,2)
    # discordant -> tau-b (2 - 1) / 3 = 1/3
    inst = [_instance("l", "A", [1.0, 0.5, 0.0])]
    pairs = {(0, 1): " a ", (0, 2): "a", (1, 2): "B "}
    grouped = {
        0: InstanceResponses(
            listwise=[THINK + "\\boxed{A}"],
            pairs={p: THINK + f"\\boxed{{{c}}}" for p, c in pairs.items()},
        )
    }
    a = score_split(inst, grouped)[0]["aletheia"]
    assert a["pair_verdicts_invalid"] == 0  # before: all three invalid
    assert a["pairwise_accuracy"] == pytest.approx(2 / 3)
    assert a["kendall_tau_b"] == pytest.approx(1 / 3)


# -- AF4: the bracketed form in the prompt, DPO's splice and constrained decoding --------------


def test_af4_the_prompt_asks_for_the_chosen_form() -> None:
    args = ("q", ["a", "b"], ["python", "python"])
    think = build_messages(*args, PromptSpec(answer_format="bracketed"))[0]["content"]
    assert "as \\boxed{[[X]]}, where X is one of those options" in think
    system = build_messages(*args, PromptSpec(style="instruct", answer_format="bracketed"))[0]
    assert "Final Answer: \\boxed{[[X]]}\n" in system["content"]
    # the default keeps its wording (published DPO prompts unchanged)
    default = build_messages(*args)[0]["content"]
    assert "as \\boxed{X}, where X" in default and "[[" not in default
    # evaluation and DPO hand their form to the prompt
    assert prompt_spec(EvalConfig(answer_format="bracketed")).answer_format == "bracketed"
    assert DPOConfig(answer_format="bracketed").prompt_spec("think").answer_format == "bracketed"


def test_af4_publish_form_reaches_dpo_and_the_build_id() -> None:
    from pipeline.config import data_projection, resolve_run_config

    repo = Path(__file__).resolve().parents[2]
    letter = resolve_run_config(repo / "configs" / "demo.yaml")
    bracketed = resolve_run_config(
        repo / "configs" / "demo.yaml", overrides={"publish.answer_format": "bracketed"}
    )
    assert (letter.dpo.answer_format, bracketed.dpo.answer_format) == ("letter", "bracketed")
    # the default leaves no trace in what the build id hashes (existing ids stay) ...
    assert "answer_format" not in data_projection(letter)["dpo"]
    # ... and the bracketed form changes the rows, so the id
    assert bracketed.build_id != letter.build_id


@pytest.fixture(scope="module")
def two_instances(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.train.rowgen import instances

    rows = instances("train")[:2]
    path = tmp_path_factory.mktemp("af4") / "train.parquet"
    write_parquet(pa.Table.from_pylist(rows, schema=INSTANCE_SCHEMA), path, INSTANCE_SCHEMA)
    return path


def _response(row: dict, s: int, box: str | None, answer: str | None) -> dict:
    return {
        "instance_id": row["instance_id"],
        "prompt_id": row["prompt_id"],
        "variant": "think",
        "judge_model": "j",
        "round": "judges",
        "sample_index": s,
        "text": f"<think>\nsample {s}\n</think>\n" + (f"\\boxed{{{box}}}" if box else "unsure"),
        "answer": answer,
        "finish_reason": "stop",
        "prompt_tokens": None,
        "completion_tokens": None,
    }


def test_af4_dpo_splice_writes_the_bracketed_box(two_instances: Path, tmp_path: Path) -> None:
    from pipeline.instances.dpo.stage import dpo_pairs

    rows = pq.read_table(two_instances).to_pylist()
    gold = [r["chosen_answer"] for r in rows]
    wrong = ["ABCDE"[(r["chosen_position"] + 1) % r["num_candidates"]] for r in rows]
    # instance 0: nobody right -> the strong judge's (only) trace with the gold spliced in;
    # instance 1: one right response in the bracketed form, one wrong
    responses = [
        _response(rows[0], 0, f"[[{wrong[0]}]]", wrong[0]),
        _response(rows[0], 1, None, None),
        _response(rows[1], 0, f"[[{gold[1]}]]", gold[1]),
        _response(rows[1], 1, f"[[{wrong[1]}]]", wrong[1]),
    ]
    path = tmp_path / "responses.parquet"
    write_parquet(pa.Table.from_pylist(responses, schema=DPO_RESPONSE_SCHEMA), path)
    cfg = DPOConfig(
        judges=[JudgeModelSpec(name="j")],
        samples_per_judge=2,
        regenerate=False,
        answer_format="bracketed",
    )
    dpo_pairs(two_instances, [path], tmp_path / "out", cfg)
    out = {r["instance_id"]: r for r in pq.read_table(tmp_path / "out" / "dpo.parquet").to_pylist()}
    zero, one = out[rows[0]["instance_id"]], out[rows[1]["instance_id"]]
    # thinkdpo_pairs.py: trace up to its first </think>, then "</think>\n\boxed{[[X]]}"
    assert zero["chosen_source"] == "gold_spliced"
    # TRL's conversational rows: one assistant message each, the prompt as messages
    text = {k: [m["content"] for m in v] for k, v in zero.items() if k in ("chosen", "rejected")}
    assert zero["chosen"][0]["role"] == "assistant"
    assert text["chosen"][0] in {
        f"<think>\nsample {s}\n</think>\n\\boxed{{[[{gold[0]}]]}}" for s in (0, 1)
    }
    assert one["chosen"][0]["content"] == f"<think>\nsample 0\n</think>\n\\boxed{{[[{gold[1]}]]}}"
    assert one["rejected"][0]["content"] == f"<think>\nsample 1\n</think>\n\\boxed{{[[{wrong[1]}]]}}"
    assert "\\boxed{[[X]]}" in one["prompt"][-1]["content"]  # the prompt asks for that form


def test_af4_constrained_decoding_writes_the_bracketed_box(tiny_model_dir: Path) -> None:
    from pipeline.instances.dpo.responses import sample_responses
    from pipeline.sampling.backends.transformers_backend import TransformersBackend
    from tests.train.rowgen import instances

    rows = instances("train")[:2]
    cfg = DPOConfig(constrain_answer=True, answer_format="bracketed", max_tokens=12)
    backend = TransformersBackend(tiny_model_dir, model_name="tiny")
    try:
        got = sample_responses(rows, backend, "tiny", "think", cfg, 2, progress=False)
    finally:
        backend.close()
    for row in rows:
        letters = "ABCDE"[: row["num_candidates"]]
        for r in got[row["instance_id"]]:
            # free text, then \boxed{[[X]]} with X one of the row's letters, read as X
            assert r.text.endswith("]]}") and "\\boxed{[[" in r.text, r.text
            box = r.text.rsplit("\\boxed{[[", 1)[1]
            assert box[0] in letters and r.answer == box[0]


def test_af4_raft_reads_a_bracketed_gold(tmp_path: Path, tiny_model_dir: Path) -> None:
    from pipeline.train import TrainConfig
    from pipeline.train.raft import sample_episode
    from tests.train.rowgen import instances

    rows = [r | {"chosen_answer": f"[[{r['chosen_answer']}]]"} for r in instances("train")[:4]]
    cfg = TrainConfig.model_validate(
        {
            "method": "raft",
            "model": str(tiny_model_dir),
            "output_dir": tmp_path / "run",
            "data": {"dir": tmp_path, "config": "train"},
            "raft": {
                "num_generations": 4,
                "max_completion_length": 12,
                "max_length": 1024,
                "constrain_answer": True,
                "backend": {"type": "transformers", "device": "cpu"},
            },
        }
    )
    samples = sample_episode(cfg, 0, str(tiny_model_dir), rows)
    assert len(samples) == 16
    for s in samples:
        gold = rows[s["row"]]["chosen_answer"][2]  # the letter inside [[X]]
        assert s["correct"] == (s["answer"] == gold)
    # constrained, a random model picks the gold letter sometimes: those count (before, a
    # letter never equalled "[[X]]", so nothing was ever correct)
    assert any(s["correct"] for s in samples)
