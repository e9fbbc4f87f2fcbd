"""`prompt_statement`: the statement as the verifier prompt shows it.

Aletheia showed the verifier the problem without its worked samples (candidates are
judged on hidden tests, and samples mostly add length). We cut sample/example
sections by heading and tidy whitespace; the full `statement` is kept beside it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from pipeline.problems.config import NormalizeConfig

# Headings that end a cut section: the usual parts of a contest statement. Bare "Input" /
# "Output" are not among them: inside an "Examples" block they label the sample's parts.
_KNOWN_HEADINGS = [
    r"input\s+format",
    r"output\s+format",
    r"input\s+specification",
    r"output\s+specification",
    r"constraints?",
    r"notes?",
    r"(problem\s+)?statement",
    r"description",
    r"scoring",
    r"subtasks?",
    r"interaction",
    r"follow[\s-]*up",
    r"hints?",
]
# A heading line: optional markdown/bold/rule decoration, the words, optional number, optional ':'.
_HEADING = r"^\s*(?:#{{1,6}}\s*|\*\*|-{{3,}}\s*)?(?:{words})(?:\s*#?\s*\d+)?\s*:?\s*(?:\*\*)?\s*(?:-{{3,}})?\s*$"


@lru_cache(maxsize=32)
def _heading_re(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(_HEADING.format(words="|".join(f"(?:{p})" for p in patterns)), re.IGNORECASE)


def cut_sample_sections(text: str, cut_headings: list[str]) -> str:
    """Remove every section whose heading matches `cut_headings`, up to the next known heading."""
    cut_re = _heading_re(tuple(cut_headings))
    any_re = _heading_re(tuple(cut_headings) + tuple(_KNOWN_HEADINGS))
    kept: list[str] = []
    cutting = False
    for line in text.splitlines():
        if cut_re.match(line):
            cutting = True
            continue
        if cutting and any_re.match(line):
            cutting = False
        if not cutting:
            kept.append(line)
    return "\n".join(kept)


def collapse_whitespace(text: str) -> str:
    """Runs of blanks inside a line -> one space, trailing blanks and 3+ newlines go.

    Leading indentation is kept: statements embed code (function signatures, docstrings).
    """
    lines = []
    for ln in text.splitlines():
        body = ln.lstrip(" \t")
        indent = ln[: len(ln) - len(body)]
        lines.append(indent + re.sub(r"[ \t\f\v\u00a0]+", " ", body).rstrip())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def prompt_statement(statement: str, config: NormalizeConfig) -> str:
    """The verifier-prompt form of `statement`; never empty when the statement is not."""
    text = unicodedata.normalize("NFC", statement.replace("\r\n", "\n").replace("\r", "\n"))
    out = cut_sample_sections(text, config.cut_headings) if config.cut_sample_io else text
    if config.collapse_whitespace:
        out = collapse_whitespace(out)
    if not out.strip():  # a statement that is all samples: keep it whole rather than nothing
        out = collapse_whitespace(text) if config.collapse_whitespace else text
    return out
