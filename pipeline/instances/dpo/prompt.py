"""The verifier prompt: a problem, 2-5 candidates tagged A-E, the answer as `\\boxed{X}`.

Our own wording of the Aletheia format. Two variants: `think` asks for reasoning first
(inside <think>...</think>), `no_think` asks for the boxed letter alone. The training and
evaluation code imports these functions, so the prompt a verifier is trained on is the
prompt it is evaluated on.
"""

from __future__ import annotations

from typing import Literal

from schemas.instance import ANSWER_LETTERS

PromptVariant = Literal["think", "no_think"]
PROMPT_VARIANTS: tuple[str, ...] = ("think", "no_think")

# Fence info strings per candidate language (markdown highlighting names).
FENCE_LANGUAGE = {"python": "python", "cpp": "cpp", "java": "java"}

_INTRO = (
    "You are reviewing candidate solutions to a programming problem. Exactly one of the "
    "candidates below is correct: it passes every hidden test. The others fail at least one."
)
_INSTRUCTIONS = {
    "think": (
        "Work out which candidate is correct. Reason step by step inside <think> and </think> "
        "(check each candidate against the problem, its edge cases and its limits), then give "
        "your final answer as the candidate's letter in the form \\boxed{{X}}, where X is one "
        "of {letters}."
    ),
    "no_think": (
        "Which candidate is correct? Do not explain. Reply with the candidate's letter only, "
        "in the form \\boxed{{X}}, where X is one of {letters}."
    ),
}


def _fence(code: str) -> str:
    """A backtick fence longer than any backtick run inside the code, so the code cannot close it."""
    longest, run = 0, 0
    for ch in code:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def build_verifier_prompt(
    query: str,
    candidates: list[str],
    languages: list[str],
    variant: PromptVariant = "think",
) -> str:
    """The user message a verifier sees for one instance.

    `candidates[i]` is shown as candidate `ANSWER_LETTERS[i]` in a fenced block tagged with
    `languages[i]`. Raises ValueError on 0/1 or more than 5 candidates, mismatched lengths
    or an unknown variant.
    """
    n = len(candidates)
    if not 2 <= n <= len(ANSWER_LETTERS):
        raise ValueError(f"candidates: need 2..{len(ANSWER_LETTERS)} candidates, got {n}")
    if len(languages) != n:
        raise ValueError(f"languages: {len(languages)} languages for {n} candidates")
    if variant not in _INSTRUCTIONS:
        raise ValueError(f"variant: {variant!r} is not one of {PROMPT_VARIANTS}")
    letters = ANSWER_LETTERS[:n]
    parts = [_INTRO, "", "## Problem", "", query.strip(), "", "## Candidates"]
    for letter, code, language in zip(letters, candidates, languages, strict=True):
        fence = _fence(code)
        parts += [
            "",
            f"### Candidate {letter}",
            "",
            f"{fence}{FENCE_LANGUAGE.get(language, language)}",
        ]
        parts += [code.rstrip("\n"), fence]
    letter_list = ", ".join(letters[:-1]) + f" or {letters[-1]}"
    parts += ["", "## Your answer", "", _INSTRUCTIONS[variant].format(letters=letter_list)]
    return "\n".join(parts)


def build_verifier_messages(
    query: str,
    candidates: list[str],
    languages: list[str],
    variant: PromptVariant = "think",
) -> list[dict[str, str]]:
    """The prompt as chat messages (one user turn), ready for a backend's `messages`."""
    return [
        {"role": "user", "content": build_verifier_prompt(query, candidates, languages, variant)}
    ]
