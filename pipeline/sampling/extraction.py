"""Pull the program out of a completion; say how, or say why not.

Order: the last fenced block tagged with the requested language (ok); else the last
untagged block, or an unclosed block of the language (fallback, the answer was cut
off); else the whole completion when it parses cleanly as the language (fallback).
Blocks only in other languages give `wrong_language`; nothing usable gives `no_code`.
A failed extraction gives empty code and is never judged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.common.syntax import parses_cleanly

_TAGS = {
    "python": {"python", "py", "python3", "py3"},
    "cpp": {"cpp", "c++", "cc", "cxx", "c", "hpp"},
    "java": {"java"},
}
# An opening fence (``` or ~~~, 3+), its info string, and the body up to the matching close.
_BLOCK = re.compile(
    r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<tag>[^\n`]*)\n(?P<body>.*?)"
    r"(?:(?P<close>^[ \t]*(?P=fence)[ \t]*$)|\Z)",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True)
class Extracted:
    code: str
    status: str  # ok | fallback | no_code | wrong_language


def _blocks(text: str) -> list[tuple[str, str, bool]]:
    """(tag, body, closed) of each fenced block, in order."""
    out = []
    for m in _BLOCK.finditer(text):
        info = m.group("tag").strip()
        tag = info.split()[0].lower() if info else ""
        out.append((tag, m.group("body"), m.group("close") is not None))
    return out


def _looks_like_program(text: str, language: str) -> bool:
    """A bare completion counts only if it parses and has the shape of a whole program."""
    markers = {"python": ("input", "print", "def ", "sys."), "cpp": ("main",), "java": ("class",)}
    return any(k in text for k in markers[language]) and parses_cleanly(text, language)


def extract_code(completion: str, language: str) -> Extracted:
    if language not in _TAGS:
        raise ValueError(f"unsupported language {language!r}")
    wanted = _TAGS[language]
    blocks = [(t, b.strip("\n"), c) for t, b, c in _blocks(completion) if b.strip()]
    closed_in_lang = [b for t, b, c in blocks if t in wanted and c]
    if closed_in_lang:
        return Extracted(closed_in_lang[-1], "ok")
    untagged = [b for t, b, c in blocks if not t]
    if untagged:
        return Extracted(untagged[-1], "fallback")
    open_in_lang = [b for t, b, c in blocks if t in wanted]
    if open_in_lang:  # the completion stopped inside the block
        return Extracted(open_in_lang[-1], "fallback")
    if blocks:
        return Extracted("", "wrong_language")
    bare = completion.strip()
    if bare and _looks_like_program(bare, language):
        return Extracted(bare, "fallback")
    return Extracted("", "no_code")
