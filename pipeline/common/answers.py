"""The one reader of a verifier's answer (DPO, publish checks, rewards, RAFT, evaluation).

Aletheia's rule (`src/rewards.py`, `list_reward` / `list_reward_cot`; `src/cerebrm_rewards.py`
for the `[[X]]` era), which every consumer here follows so that a response scores the same
wherever it is read:

1. the answer part is the text after the *last* `</think>`, stripped; a response with no
   `</think>` is read whole (Aletheia's `split("</think>")[-1]`, so the Instruct style, which
   has no think tags, is read whole too);
2. the answer is the content of the *first* `\\boxed{...}` in the answer part, up to the
   first closing brace (a box inside the thinking earns nothing);
3. the content counts in either of Aletheia's two forms, the bare letter `A` (its
   `rewards.py` prompts) or `[[A]]` (its cerebrm-era prompts, `cerebrm_prompts.py`, whose
   reward compares the box with `[[A]]`); the content must be exactly one of them, with one
   of the valid letters (`A`.. up to the number of candidates): `\\boxed{ B }`,
   `\\boxed{\\text{B}}`, `\\boxed{(B)}`, `\\boxed{[[ B ]]}` and `\\boxed{AB}` are invalid, as
   they score 0 in Aletheia.

That is the `after_think` rule (`AnswerRule`), the default everywhere. Evaluation offers
Aletheia's evaluation scripts' own rule as an option, `first_box`: `evaluate_ckpt.py` and
`evaluate.py` take the first box of the *whole* completion (a box inside the thinking
counts), and `evaluate.py` unwraps `[[..]]` by splitting (`content.split("[[")[1]
.split("]]")[0]`, so text around the brackets inside the box is dropped).

Pair prompts (the round-robin of the ranking metrics) are read as Aletheia's
`ranking_consistency.py` reads them: the box content stripped and upper-cased, then `A` or
`B` (`pair_answer`).

`lenient=True` is our named option for reading responses of models that were never trained
on the format (wrappers, spaces, parentheses are peeled off); it is never the default.

Answer columns (`chosen_answer`, DPO's `rejected_answer`) hold the bare letter by default;
`answer_format: bracketed` at publish writes Aletheia's dataset form `[[A]]` instead (its
`cerebrm_datagen.py` answer list), and then the prompt asks for `\\boxed{[[X]]}` and DPO's
gold splice writes `\\boxed{[[A]]}` (`answer_box`), as Aletheia's cerebrm-era data did.
Every reader of our rows goes through `gold_letter`, which takes both forms.

`well_formed` is Aletheia's format check (`list_format_reward*`): Think responses must be
`<think>` ... `</think>` then only the box, with no second `<think>`; Instruct responses
must end with the box; the box in the form the prompt asked for (`answer_format`), or in
either form when none is given.

The vLLM worker keeps its own copy of the answer *regex* (it runs without this package);
`tests/conformance/test_answers_and_prompt.py` checks that the two agree on a shared table.
"""

from __future__ import annotations

import re
from typing import Literal

from schemas.instance import ANSWER_LETTERS

INVALID = "invalid"  # what tables store for a response with no valid answer

ResponseStyle = Literal["think", "instruct"]
# Where the answer box is looked for: after the last </think> (the training reward's rule,
# the default) or anywhere in the completion (Aletheia's evaluation scripts).
AnswerRule = Literal["after_think", "first_box"]
ANSWER_RULES: tuple[str, ...] = ("after_think", "first_box")

_THINK_CLOSE = "</think>"
_FIRST_BOX = re.compile(r"\\boxed\{(.*?)\}", re.DOTALL)
_EXACT_BRACKETS = re.compile(r"^\[\[(.*)\]\]$", re.DOTALL)
# Wrappers that lenient reading peels off: \text{B}, \mathrm{B}, \textbf{B}, ...
_WRAPPER = re.compile(
    r"^\\(?:text|mathrm|mathbf|textbf|texttt|mbox|textsf)\s*\{(.*)\}?$", re.DOTALL
)
_LENIENT_LETTER = re.compile(
    r"^(?:candidate|option|answer)?\s*[\s(\[*]*([A-Za-z])[\s)\].:*]*$", re.IGNORECASE
)


AnswerFormat = Literal["letter", "bracketed"]
_BRACKETED = re.compile(r"^\[\[([A-Z])\]\]$")


def gold_letter(value: str) -> str:
    """An answer column's value as the bare letter: `A` and `[[A]]` both give `A`; anything
    else (`invalid`, a malformed value) comes back unchanged, so it matches no letter."""
    m = _BRACKETED.match(value)
    return m.group(1) if m else value


def column_answer_format(values: list[str], where: str = "chosen_answer") -> AnswerFormat:
    """The form an answer column is published in: `bracketed` when its letters are written
    `[[A]]`, else `letter`; a column mixing both forms is an error naming it."""
    forms = {"bracketed" if _BRACKETED.match(v) else "letter" for v in values if v != INVALID}
    if len(forms) > 1:
        raise ValueError(f"{where}: mixes `A` and `[[A]]` values; a release uses one form")
    return "bracketed" if forms == {"bracketed"} else "letter"


def format_answer(value: str, answer_format: AnswerFormat) -> str:
    """An answer column's value in `answer_format`: `A` or `[[A]]`; `invalid` stays `invalid`."""
    letter = gold_letter(value)
    if answer_format == "bracketed" and letter in ANSWER_LETTERS:
        return f"[[{letter}]]"
    return letter


def answer_box(letter: str, answer_format: AnswerFormat = "letter") -> str:
    """The box a response ends with: `\\boxed{A}`, or `\\boxed{[[A]]}` in the bracketed form
    (`letter` may be `[[A]]` already, or a placeholder such as `X` in a prompt)."""
    letter = gold_letter(letter)
    return "\\boxed{" + (f"[[{letter}]]" if answer_format == "bracketed" else letter) + "}"


def valid_options(num_candidates: int) -> tuple[str, ...]:
    """The letters a response may answer with for a list of `num_candidates`."""
    if not 1 <= num_candidates <= len(ANSWER_LETTERS):
        raise ValueError(f"num_candidates: {num_candidates} is not in 1..{len(ANSWER_LETTERS)}")
    return ANSWER_LETTERS[:num_candidates]


def answer_choices(num_candidates: int, answer_format: AnswerFormat = "letter") -> list[str]:
    """What constrained decoding may write inside the box: the valid letters, in the form
    the prompt asks for (`A` or `[[A]]`)."""
    return [format_answer(x, answer_format) for x in valid_options(num_candidates)]


def answer_part(text: str) -> str:
    """The text after the last `</think>` (the whole text when there is none), stripped."""
    return text.split(_THINK_CLOSE)[-1].strip()


def first_box(text: str) -> str | None:
    """The content of the first `\\boxed{...}` in `text`, up to the first `}`; None if none."""
    match = _FIRST_BOX.search(text)
    return match.group(1) if match else None


def _unwrap(content: str, rule: AnswerRule) -> str:
    """The box content with Aletheia's `[[..]]` taken off: exactly `[[X]]` gives `X` under
    `after_think`; under `first_box`, `evaluate.py`'s split (between the first `[[` and the
    next `]]`, whatever surrounds them)."""
    if rule == "first_box":
        return content.split("[[")[1].split("]]")[0] if "[[" in content else content
    m = _EXACT_BRACKETS.match(content)
    return m.group(1) if m else content


def raw_answer(text: str, rule: AnswerRule = "after_think") -> str | None:
    """The answer as written: the first box's content (in the answer part for `after_think`,
    anywhere for `first_box`) with `[[..]]` taken off; None when there is no box. What
    Aletheia's majority vote counts: each distinct value is its own vote."""
    if rule not in ANSWER_RULES:
        raise ValueError(f"rule: {rule!r} is not one of {ANSWER_RULES}")
    content = first_box(answer_part(text) if rule == "after_think" else text)
    return None if content is None else _unwrap(content, rule)


def _lenient_letter(content: str) -> str | None:
    content = content.strip()
    while (m := _WRAPPER.match(content)) is not None:
        content = m.group(1).strip()
    m = _LENIENT_LETTER.match(content)
    return m.group(1).upper() if m else None


def parse_answer(
    text: str, num_candidates: int, *, lenient: bool = False, rule: AnswerRule = "after_think"
) -> str | None:
    """The letter a response picks, or None when it picks no valid option (see module doc)."""
    options = valid_options(num_candidates)
    content = raw_answer(text, rule)
    if content is None:
        return None
    letter = _lenient_letter(content) if lenient else content
    return letter if letter in options else None


def pair_answer(text: str, rule: AnswerRule = "after_think") -> str | None:
    """A 2-candidate (round-robin) response's letter, `A` or `B`, read as Aletheia's
    `ranking_consistency.py` reads it: the box content stripped and upper-cased."""
    content = raw_answer(text, rule)
    letter = content.strip().upper() if content is not None else None
    return letter if letter in ("A", "B") else None


def is_correct(text: str, gold: str, num_candidates: int) -> bool:
    """Whether a response picks the gold answer (`gold` in either column form)."""
    return parse_answer(text, num_candidates) == gold_letter(gold)


def answer_or_invalid(text: str, num_candidates: int, *, lenient: bool = False) -> str:
    """`parse_answer`, with INVALID in place of None (the value stored in tables)."""
    return parse_answer(text, num_candidates, lenient=lenient) or INVALID


def _box_of(options: tuple[str, ...], answer_format: AnswerFormat | None = None) -> str:
    letters = "".join(options)
    forms = {"letter": "[" + letters + "]", "bracketed": r"\[\[[" + letters + r"]\]\]"}
    inner = forms[answer_format] if answer_format else "|".join(forms.values())
    return r"\\boxed\{(?:" + inner + r")\}"


def well_formed(
    text: str,
    num_candidates: int,
    style: ResponseStyle,
    answer_format: AnswerFormat | None = None,
) -> bool:
    """Aletheia's format check: see the module docstring. `text` is the whole assistant turn
    (for Think, the `<think>\\n` prefill included, as TRL hands it to reward functions).
    `answer_format`: only that box form is well formed, as each of Aletheia's format rewards
    accepts only the form its prompt asked for (`rewards.py` `\\boxed{A}`, `cerebrm_rewards.py`
    `\\boxed{[[A]]}`); None takes both."""
    box = _box_of(valid_options(num_candidates), answer_format)
    content = text.strip()
    if style == "think":
        return (
            re.match(rf"^<think>(?!.*<think>)(.*?)</think>\s*{box}$", content, re.DOTALL)
            is not None
        )
    if style == "instruct":
        return re.search(rf"{box}$", content) is not None
    raise ValueError(f"style: {style!r} is not 'think' or 'instruct'")


def answer_regex(options: tuple[str, ...] | list[str]) -> str:
    """A regex a whole constrained response must match: any text, then `\\boxed{X}` at the end.

    For structured decoding (vLLM `structured_outputs`, OpenAI-compatible servers). The
    engines' regex dialects have no look-around, so the free text is not kept free of other
    boxes here; the transformers backend enforces that itself, and DPO/evaluation read every
    response with `parse_answer`, which counts an earlier box as the answer.
    """
    alts = "|".join(re.escape(o) for o in options)
    return r"[\s\S]*\\boxed\{(" + alts + r")\}"
