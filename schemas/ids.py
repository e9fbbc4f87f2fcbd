"""Stable identifiers. Same content in, same id out, on every machine."""

from __future__ import annotations

import hashlib


def _sha(*parts: str, length: int = 16) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()[:length]


def problem_id_for(source: str, source_id: str) -> str:
    """`problem_id`: a hash of the source name and the id the source gives the row."""
    return "p_" + _sha(source, source_id)


def normalize_code(code: str) -> str:
    """Identity normalisation: newlines, trailing spaces and surrounding blank lines."""
    lines = code.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def candidate_id_for(language: str, code: str) -> str:
    """`candidate_id`: a hash of the language and the normalised code."""
    return "c_" + _sha(language, normalize_code(code))


def instance_id_for(problem_id: str, candidate_ids: list[str], salt: str = "") -> str:
    """`instance_id` of an instance: its problem and its ordered candidates (salt: the split).

    (An instance's `prompt_id` is its problem's id, as in Aletheia; this names the row.)
    """
    return "i_" + _sha(problem_id, *candidate_ids, salt)


# Old name, kept until the adversarial stage (another branch) switches to `instance_id_for`.
prompt_id_for = instance_id_for
