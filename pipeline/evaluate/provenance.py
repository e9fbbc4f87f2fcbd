"""What a responses file was generated with: `<stem>.generation.json` beside it.

`aletheia evaluate` writes one beside every `responses.jsonl` it writes, so the settings
travel with the responses: `aletheia evaluate --responses FILE` reads the one beside FILE
and records it in its report (`generated_with`) instead of its own, unrelated defaults.
A file generated elsewhere may carry one too (the same keys, any of them); a setting it
does not give, or a file with no such companion, is recorded as "unknown", never guessed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.evaluate.config import EvalConfig

UNKNOWN = "unknown"
# What decides the responses themselves (scoring settings such as the split or the flag
# threshold belong to the scoring run, not here).
GENERATION_FIELDS: tuple[str, ...] = (
    "model",
    "backend",
    "k",
    "max_new_tokens",
    "constrain_answer",
    "style",
    "prompt_template",
    "system_template",
    "aletheia_src",
    "prompt_wording",
    "pairwise",
    "temperature",
    "top_p",
    "seed",
)


class ProvenanceError(ValueError):
    """A `.generation.json` companion that is not a JSON object."""


def provenance_path(responses: str | Path) -> Path:
    """`out/responses.jsonl` -> `out/responses.generation.json` (a Parquet file alike)."""
    p = Path(responses)
    return p.with_name(f"{p.stem}.generation.json")


def generated_with(model: str, cfg: EvalConfig, backend: dict[str, Any]) -> dict[str, Any]:
    """The settings a model run generated its responses with."""
    from pipeline.common.verifier_prompt import wording
    from pipeline.evaluate.runner import prompt_spec

    knobs = cfg.model_dump(mode="json") | {"prompt_wording": wording(prompt_spec(cfg))}
    return {"model": model, "backend": backend} | {
        f: knobs.get(f) for f in GENERATION_FIELDS if f not in ("model", "backend")
    }


def read_provenance(responses: str | Path) -> dict[str, Any]:
    """The settings recorded beside a responses file; each one missing is "unknown"."""
    path = provenance_path(responses)
    given: dict[str, Any] = {}
    if path.is_file():
        try:
            given = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ProvenanceError(f"{path}: not JSON ({exc.msg})") from None
        if not isinstance(given, dict):
            raise ProvenanceError(f"{path}: a JSON object of generation settings, not {given!r}")
    # Keys beyond ours are kept: they are the generator's own record.
    return {f: UNKNOWN for f in GENERATION_FIELDS} | given


def write_provenance(responses: str | Path, settings: dict[str, Any]) -> Path:
    path = provenance_path(responses)
    path.write_text(json.dumps(settings, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path


def describe(settings: dict[str, Any]) -> str:
    """One line: `model M, K = 2, 16 new tokens, constrained answers, style think`."""

    def known(key: str) -> bool:
        return settings.get(key, UNKNOWN) != UNKNOWN

    if not any(known(f) for f in GENERATION_FIELDS):
        return "generation settings unknown"
    constrained = settings.get("constrain_answer", UNKNOWN)
    answers = (
        "constrained answers" if constrained is True
        else "free answers" if constrained is False
        else f"constrained answers {UNKNOWN}"
    )  # fmt: skip
    parts = [
        f"model {settings.get('model', UNKNOWN)}",
        f"K = {settings.get('k', UNKNOWN)}",
        f"{settings.get('max_new_tokens', UNKNOWN)} new tokens",
        answers,
        f"style {settings.get('style', UNKNOWN)}",
    ]
    return ", ".join(parts)
