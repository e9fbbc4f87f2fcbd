"""Conformance: the answer rule and the prompt structure (docs/aletheia-conformance.md, rows
"answer parsing" and "verifier prompt"). Expected values are written out by hand from
Aletheia's definitions (src/rewards.py, src/grpo_training.py), not computed by our code."""

from __future__ import annotations

import re

import pytest

from pipeline.common.answers import answer_regex, parse_answer, well_formed
from pipeline.common.verifier_prompt import (
    PromptSpec,
    TemplateError,
    build_messages,
    format_candidates,
    prefill,
)

# (response, number of candidates, Aletheia's reading): text after the last </think>, the
# first \boxed{...} up to the first '}', kept only when it equals a valid letter exactly.
ANSWER_TABLE = [
    ("<think>\nA looks right\n</think>\n\\boxed{B}", 2, "B"),
    ("<think>\nmaybe \\boxed{A}\n</think>\n\\boxed{B}", 2, "B"),  # box in thinking ignored
    ("<think>\n\\boxed{A}\n</think>\nno box here", 2, None),  # only a box in the thinking
    ("\\boxed{C} then \\boxed{A}", 3, "C"),  # the first box wins, not the last
    ("<think>x</think> y </think> \\boxed{D}", 4, "D"),  # after the LAST </think>
    ("\\boxed{ B }", 2, None),  # spaces: not exactly a letter
    ("\\boxed{\\text{B}}", 2, None),
    ("\\boxed{(C)}", 3, None),
    ("\\boxed{AB}", 2, None),
    ("\\boxed{E}", 4, None),  # not a valid option for 4 candidates
    ("\\boxed{e}", 5, None),  # case matters
    ("<think>\nunclosed \\boxed{A}", 2, "A"),  # no </think>: read whole (Aletheia's split)
    ("Analysis: A fails on n=0.\nFinal Answer: \\boxed{B}", 2, "B"),
    ("", 2, None),
]


@pytest.mark.parametrize("text,n,expected", ANSWER_TABLE)
def test_parse_answer_follows_aletheia(text: str, n: int, expected: str | None) -> None:
    assert parse_answer(text, n) == expected


@pytest.mark.parametrize(
    "text,n,expected",
    [
        ("\\boxed{ B }", 2, "B"),
        ("\\boxed{\\text{B}}", 2, "B"),
        ("\\boxed{(C)}", 3, "C"),
        ("\\boxed{AB}", 2, None),
    ],
)
def test_lenient_reading_is_an_option(text: str, n: int, expected: str | None) -> None:
    assert parse_answer(text, n, lenient=True) == expected


@pytest.mark.parametrize(
    "text,n,style,ok",
    [
        ("<think>\nreason\n</think>\n\\boxed{A}", 2, "think", True),
        ("<think>\nreason\n</think>\\boxed{C}", 3, "think", True),
        ("<think>\nreason\n</think>\n\\boxed{C}", 2, "think", False),  # C invalid for 2
        ("<think>\nr <think> r\n</think>\n\\boxed{A}", 2, "think", False),  # second <think>
        ("reason\n</think>\n\\boxed{A}", 2, "think", False),  # must start with <think>
        ("<think>\nreason\n</think>\n\\boxed{A} done", 2, "think", False),  # text after box
        ("Analysis: ...\nFinal Answer: \\boxed{B}", 2, "instruct", True),
        ("Analysis: ...\nFinal Answer: \\boxed{B}.", 2, "instruct", False),
    ],
)
def test_format_check_follows_aletheia(text: str, n: int, style: str, ok: bool) -> None:
    assert well_formed(text, n, style) is ok  # type: ignore[arg-type]


def test_answer_regex_accepts_what_the_parser_reads() -> None:
    regex = answer_regex(["A", "B"])
    assert re.fullmatch(regex, "thinking...\n\\boxed{B}")
    assert not re.fullmatch(regex, "\\boxed{C}")
    assert not re.fullmatch(regex, "\\boxed{A} and more")


def test_candidate_blocks_have_aletheia_structure() -> None:
    # Aletheia's f"[CANDIDATE_{i}]\n```{language}\n{candidate}\n```\n[/CANDIDATE_{i}]": the
    # code goes in as stored, so a trailing newline leaves a blank line before the fence
    got = format_candidates(["print(1)\n", "x = 2"], ["python", "python"])
    assert got == (
        "[CANDIDATE_A]\n```python\nprint(1)\n\n```\n[/CANDIDATE_A]\n\n"
        "[CANDIDATE_B]\n```python\nx = 2\n```\n[/CANDIDATE_B]"
    )


def test_think_prompt_is_user_turn_plus_think_prefill() -> None:
    msgs = build_messages("Add two numbers.", ["a", "b", "c"], ["cpp", "java", "python"])
    assert [m["role"] for m in msgs] == ["user", "assistant"]
    assert msgs[1]["content"] == "<think>\n" and prefill(msgs) == "<think>\n"
    user = msgs[0]["content"]
    assert "[QUESTION]\nAdd two numbers.\n[/QUESTION]" in user
    assert "[CANDIDATE_C]\n```python\nc\n```\n[/CANDIDATE_C]" in user
    assert "A, B, C" in user and "\\boxed{X}" in user
    assert user.index("[QUESTION]") < user.index("[CANDIDATE_A]") < user.index("A, B, C")


def test_instruct_prompt_is_system_plus_user_without_think_tags() -> None:
    msgs = build_messages("q", ["a", "b"], ["python", "python"], PromptSpec(style="instruct"))
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "A, B" in msgs[0]["content"] and "\\boxed{X}" in msgs[0]["content"]
    assert "<think>" not in msgs[0]["content"] + msgs[1]["content"]
    assert (
        msgs[1]["content"].startswith("The problem")
        and "[QUESTION]\nq\n[/QUESTION]" in msgs[1]["content"]
    )
    assert prefill(msgs) == ""


def test_user_template_drops_in(tmp_path) -> None:
    path = tmp_path / "published.txt"
    path.write_text("Q={question}|C={candidates}|O={valid_options}|\\boxed{{X}}")
    msgs = build_messages("q", ["a", "b"], ["java", "java"], PromptSpec(template=str(path)))
    assert msgs[0]["content"] == (
        "Q=q|C=[CANDIDATE_A]\n```java\na\n```\n[/CANDIDATE_A]\n\n"
        "[CANDIDATE_B]\n```java\nb\n```\n[/CANDIDATE_B]|O=A, B|\\boxed{X}"
    )


@pytest.mark.parametrize(
    "text,message",
    [
        ("{question} {valid_options}", "missing"),  # {candidates} is required
        ("{question} {candidates} {valid_options} {x}", "unknown"),
        ("{question", "malformed"),
    ],
)
def test_bad_template_is_named(tmp_path, text: str, message: str) -> None:
    path = tmp_path / f"t{abs(hash(text))}.txt"
    path.write_text(text)
    with pytest.raises(TemplateError, match=message):
        build_messages("q", ["a", "b"], ["python"] * 2, PromptSpec(template=str(path)))


def test_fence_outgrows_backticks_in_code() -> None:
    code = 's = "```"'
    got = format_candidates([code, "x"], ["python", "python"])
    assert "````python\n" + code + "\n````" in got


@pytest.mark.parametrize("options", [["A", "B"], ["A", "B", "C", "D", "E"]])
@pytest.mark.parametrize(
    "text",
    ["x\n\\boxed{A}", "\\boxed{B}", "\\boxed{E}", "x\\boxed{AB}", "\\boxed{A} more", "no box"],
)
def test_vllm_worker_copy_of_the_regex_agrees(options: list[str], text: str) -> None:
    """The vLLM worker runs without our package and keeps a copy of answer_regex."""
    from pipeline.sampling.backends import vllm_worker

    ours = re.fullmatch(answer_regex(options), text) is not None
    theirs = re.fullmatch(vllm_worker.answer_regex(options), text) is not None
    assert ours == theirs
