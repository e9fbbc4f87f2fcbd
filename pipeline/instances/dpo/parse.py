"""Read a verifier's answer: the letter in its last `\\boxed{...}`.

The last box wins (models often box tentative answers while reasoning). A response with
no box, or whose last box does not hold one letter among the instance's candidates, is
"invalid": its own class, never silently mapped to a letter.
"""

from __future__ import annotations

import re

from schemas.instance import ANSWER_LETTERS

INVALID = "invalid"  # the value DPO rows store in rejected_answer for an unparseable response

_BOX_OPEN = re.compile(r"\\boxed\s*\{")
# Wrappers models put around a letter inside the box: \text{B}, \mathrm{B}, \textbf{B}, ...
_WRAPPER = re.compile(r"^\\(?:text|mathrm|mathbf|textbf|texttt|mbox|textsf)\s*\{(.*)\}$", re.DOTALL)
# What may surround the letter: "(B)", "B.", "**B**", "Candidate B", "Option B:".
_LETTER = re.compile(
    r"^(?:candidate|option|answer)?\s*[\s(\[*]*([A-Za-z])[\s)\].:*]*$", re.IGNORECASE
)


def _box_contents(text: str) -> list[str]:
    """Contents of every `\\boxed{...}`, with nested braces balanced; an unclosed box is skipped."""
    out: list[str] = []
    for match in _BOX_OPEN.finditer(text):
        depth, i = 1, match.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            out.append(text[match.end() : i - 1])
    return out


def _letter(content: str) -> str | None:
    content = content.strip()
    while (m := _WRAPPER.match(content)) is not None:
        content = m.group(1).strip()
    m = _LETTER.match(content)
    return m.group(1).upper() if m else None


def parse_boxed_answer(text: str, num_candidates: int) -> str | None:
    """The letter of the last `\\boxed{}` in `text`, or None when it is missing or invalid.

    Valid letters are `ANSWER_LETTERS[:num_candidates]`; anything else (another letter, a
    number, several letters, an empty box) is None.
    """
    if not 1 <= num_candidates <= len(ANSWER_LETTERS):
        raise ValueError(f"num_candidates: {num_candidates} is not in 1..{len(ANSWER_LETTERS)}")
    boxes = _box_contents(text)
    if not boxes:
        return None
    letter = _letter(boxes[-1])
    return letter if letter in ANSWER_LETTERS[:num_candidates] else None
