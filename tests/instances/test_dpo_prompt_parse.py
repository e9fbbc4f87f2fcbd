"""The verifier prompt and the boxed-answer parser, on hand-written responses."""

from __future__ import annotations

import pytest

from pipeline.instances.dpo.parse import parse_boxed_answer
from pipeline.instances.dpo.prompt import build_verifier_messages, build_verifier_prompt

CANDS = ["print(sum(map(int, input().split())))", "int main() { return 1; }", "class Main {}"]
LANGS = ["python", "cpp", "java"]


@pytest.mark.parametrize(
    ("response", "n", "expected"),
    [
        (r"<think>A overflows.</think> The answer is \boxed{B}", 3, "B"),
        (r"Maybe \boxed{A}... no, on reflection \boxed{C}.", 3, "C"),  # last box wins
        (r"\boxed{\text{B}}", 3, "B"),
        (r"\boxed{\textbf{ C }}", 3, "C"),
        (r"\boxed{(a)}", 3, "A"),
        (r"\boxed{ Candidate B }", 2, "B"),
        (r"\boxed {E}", 5, "E"),
        (r"\boxed{D}", 3, None),  # a letter beyond the candidates
        (r"\boxed{E}", 4, None),
        (r"\boxed{AB}", 3, None),  # two letters
        (r"\boxed{2}", 3, None),  # a number, not a letter
        (r"\boxed{}", 3, None),
        (r"\boxed{B", 3, None),  # never closed
        (r"I think it is B.", 3, None),  # no box
        (r"\boxed{B} but the final word: \boxed{Z}", 3, None),  # an invalid last box is invalid
        (r"\boxed{\text{A}} then \boxed{C", 3, "A"),  # an unclosed trailing box is skipped
        ("", 2, None),
    ],
)
def test_parse_boxed_answer(response: str, n: int, expected: str | None) -> None:
    assert parse_boxed_answer(response, n) == expected


def test_parse_rejects_bad_num_candidates() -> None:
    with pytest.raises(ValueError, match="num_candidates"):
        parse_boxed_answer(r"\boxed{A}", 0)


@pytest.mark.parametrize("variant", ["think", "no_think"])
def test_prompt_tags_each_candidate_with_letter_and_language(variant: str) -> None:
    prompt = build_verifier_prompt("Add two numbers.", CANDS, LANGS, variant)  # type: ignore[arg-type]
    assert "Add two numbers." in prompt
    for letter, code, lang in zip("ABC", CANDS, LANGS, strict=True):
        assert f"### Candidate {letter}\n\n```{lang}\n{code}\n```" in prompt
    assert "Candidate D" not in prompt
    assert "\\boxed{X}" in prompt and "A, B or C" in prompt
    assert ("<think>" in prompt) == (variant == "think")


def test_prompt_fence_survives_backticks_in_code() -> None:
    code = 'print("```")'
    prompt = build_verifier_prompt("q", [code, "x = 1"], ["python", "python"], "no_think")
    assert f"````python\n{code}\n````" in prompt


def test_prompt_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="candidates"):
        build_verifier_prompt("q", ["a"], ["python"])
    with pytest.raises(ValueError, match="candidates"):
        build_verifier_prompt("q", ["a"] * 6, ["python"] * 6)
    with pytest.raises(ValueError, match="languages"):
        build_verifier_prompt("q", ["a", "b"], ["python"])
    with pytest.raises(ValueError, match="variant"):
        build_verifier_prompt("q", ["a", "b"], ["python"] * 2, "fast")  # type: ignore[arg-type]


def test_messages_wrap_the_prompt() -> None:
    msgs = build_verifier_messages("q", CANDS, LANGS, "think")
    assert msgs == [{"role": "user", "content": build_verifier_prompt("q", CANDS, LANGS, "think")}]
