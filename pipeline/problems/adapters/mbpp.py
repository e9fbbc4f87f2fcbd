"""MBPP (Austin et al. 2021) in its own shape -> Problem, function mode, splits kept by task_id.

Rows: `task_id`, the task text (`text` in the `full` config and the original
mbpp.jsonl, `prompt` in `sanitized`), the reference `code`, `test_setup_code`
(`test_imports`, a list, in `sanitized`), `test_list` (asserts) and, optionally,
`challenge_test_list`.

Specs: `mbpp` (the Hub dataset, config `full`), `mbpp:sanitized` (Hub, config
`sanitized`), `mbpp:/path/mbpp.jsonl` (MBPP's own file), each with an optional
`#SPLIT` (prompt | test | validation | train) to keep only that split; without one
every row is kept and the split is in the `source_split` column.

Tests: one function-mode test per assert, each `test_setup_code` + the assert (the
candidate's code runs first, as for every function-mode test); `challenge_test_list`
is optional and added only with `MbppAdapter(challenge_tests=True)`.
The entry point is the function the first assert calls that the reference defines.
"""

from __future__ import annotations

import ast
import builtins
import json
from pathlib import Path
from typing import Any, ClassVar

from pipeline.problems.adapters.base import Adapter, AdapterContext, require_text
from pipeline.problems.errors import RowError, SourceError
from pipeline.problems.jsonl import MalformedLine, malformed_lines

HUB_ID = "google-research-datasets/mbpp"
HUB_CONFIGS = ("full", "sanitized")
SPLITS = ("prompt", "test", "validation", "train")
ALL = "all"

# The policy sees the task and the first assert (the usual MBPP prompting); our own words.
# Placeholders: {text} (the task), {test} (the first assert). Override per adapter instance.
DEFAULT_PROMPT_TEMPLATE = (
    "{text}\n\nYour function must make this check pass:\n```python\n{test}\n```"
)


def mbpp_split(task_id: int) -> str:
    """MBPP's standard split of a task id (the paper's ranges, the Hub's splits)."""
    if 1 <= task_id <= 10:
        return "prompt"
    if 11 <= task_id <= 510:
        return "test"
    if 511 <= task_id <= 600:
        return "validation"
    if 601 <= task_id <= 974:
        return "train"
    raise RowError("task_id", f"task_id {task_id} is outside MBPP's 1..974")


def _read_jsonl(path: Path) -> tuple[list[dict[str, Any]], list[MalformedLine]]:
    """The JSON-object lines of `path`, and the lines that are not (left out, reported)."""
    bad = malformed_lines(path)
    skip = {b.line for b in bad}
    with path.open("rb") as f:
        rows = [
            json.loads(raw) for n, raw in enumerate(f, start=1) if n not in skip and raw.strip()
        ]
    return rows, bad


def load_mbpp_rows(
    location: str | None, split: str, cache_dir: str | None = None
) -> list[dict[str, Any]]:
    """Rows of MBPP (a local .jsonl/.json, or the Hub dataset `full`/`sanitized`), all or one split.

    Strict: a malformed line is an error (a decontamination benchmark must be read whole).
    Ingest reads through `load_mbpp_source`, which quarantines such lines instead."""
    rows, bad = load_mbpp_source(location, split, cache_dir)
    if bad:
        raise SourceError("mbpp", f"{bad[0].file}: line {bad[0].line}: {bad[0].reason}")
    return rows


def load_mbpp_source(
    location: str | None, split: str, cache_dir: str | None = None
) -> tuple[list[dict[str, Any]], list[MalformedLine]]:
    """`load_mbpp_rows`, with a local file's malformed JSON lines left out and returned."""
    malformed: list[MalformedLine] = []
    if split != ALL and split not in SPLITS:
        raise SourceError(
            "mbpp", f"unknown MBPP split {split!r}; known: {', '.join(SPLITS)} (or none for all)"
        )
    if location and location not in HUB_CONFIGS:
        path = Path(location)
        if not path.is_file():
            raise SourceError(
                "mbpp",
                f"no MBPP file at {path} (give a .jsonl in MBPP's shape, or `full`/`sanitized`)",
            )
        if path.suffix in (".jsonl", ".json"):
            rows, malformed = _read_jsonl(path)
        else:
            rows = _read_parquet(path)
    else:
        rows = _load_hub(location or "full", cache_dir)
    if split == ALL:
        return rows, malformed
    out = []
    for r in rows:
        try:
            if mbpp_split(int(r["task_id"])) == split:
                out.append(r)
        except (KeyError, TypeError, ValueError, RowError):
            out.append(r)  # a bad task_id is quarantined by the adapter, never dropped here
    return out, malformed


def _read_parquet(path: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


def _load_hub(config: str, cache_dir: str | None) -> list[dict[str, Any]]:
    """Every split of the Hub dataset (needs network or a populated HF cache)."""
    import datasets

    try:
        dd = datasets.load_dataset(HUB_ID, config, cache_dir=cache_dir)
    except Exception as e:
        raise SourceError(
            "mbpp", f"cannot load {HUB_ID} ({config}): {type(e).__name__}: {e}"
        ) from e
    return [row for name in dd for row in dd[name]]


def _called_names(expr: str) -> list[str]:
    """Names of plain functions called in an assert, in source order."""
    try:
        tree = ast.parse(expr)
    except SyntaxError:
        return []
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    calls.sort(key=lambda n: (n.lineno, n.col_offset))
    return [c.func.id for c in calls]  # type: ignore[attr-defined]


def _defined_names(code: str) -> set[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return {
        n.name
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }


def entry_point(tests: list[str], reference: str) -> str:
    """The function the asserts call: one the reference defines, else the first non-builtin call."""
    defined = _defined_names(reference)
    called = [n for t in tests for n in _called_names(t)]
    for name in called:
        if name in defined:
            return name
    for name in called:
        if not hasattr(builtins, name):
            return name
    raise RowError(
        "test_list", "no function call found in the asserts (cannot tell the entry point)"
    )


def _setup_code(row: dict[str, Any]) -> str:
    setup = row.get("test_setup_code")
    if setup is None and isinstance(row.get("test_imports"), list):  # the sanitized config
        setup = "\n".join(row["test_imports"])
    if setup is not None and not isinstance(setup, str):
        raise RowError("test_setup_code", f"expected text, got {type(setup).__name__}")
    return (setup or "").strip()


def _asserts(row: dict[str, Any], name: str) -> list[str]:
    value = row.get(name)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise RowError(name, "expected a list of assert strings")
    return [t.strip() for t in value if t.strip()]


class MbppAdapter(Adapter):
    name = "mbpp"
    default_hub_id = HUB_ID
    default_split = ALL
    required_columns: ClassVar[tuple[str, ...]] = ("task_id", "code", "test_list")

    def __init__(
        self, prompt_template: str = DEFAULT_PROMPT_TEMPLATE, challenge_tests: bool = False
    ) -> None:
        if "{text}" not in prompt_template:
            raise ValueError("an MBPP prompt template needs a {text} placeholder")
        self.prompt_template = prompt_template
        self.challenge_tests = challenge_tests

    def row_id(self, row: dict[str, Any], index: int, ctx: AdapterContext) -> str:
        return str(row.get("task_id", f"row{index}"))

    def convert(self, row: dict[str, Any], row_id: str, ctx: AdapterContext) -> dict[str, Any]:
        try:
            task_id = int(row["task_id"])
        except (KeyError, TypeError, ValueError) as e:
            raise RowError("task_id", f"not an integer: {row.get('task_id')!r}") from e
        split = mbpp_split(task_id)
        text = require_text(row, "text") or require_text(row, "prompt")
        if not text.strip():
            raise RowError("text", "empty task text (neither `text` nor `prompt` is set)")
        reference = require_text(row, "code")
        asserts = _asserts(row, "test_list")
        if not asserts:
            raise RowError("test_list", "no asserts")
        challenge = _asserts(row, "challenge_test_list") if self.challenge_tests else []
        setup = _setup_code(row)
        entry = entry_point(asserts, reference)
        prompt = self.prompt_template.format(text=text.strip(), test=asserts[0])
        tests = [{"code": (f"{setup}\n" if setup else "") + t + "\n"} for t in asserts + challenge]
        return {
            "source_id": str(task_id),
            "title": f"MBPP/{task_id}",
            "statement": text.strip(),
            "prompt_statement": prompt,
            "test_mode": "function",
            "tests": tests,
            "entry_point": entry,
            "time_limit_s": 10.0,  # MBPP asserts are tiny; this only guards against hangs
            "tags": ["mbpp", f"mbpp:{split}"],
            "source_split": split,
            "solutions": [{"language": "python", "code": reference, "correct": True}]
            if reference.strip()
            else [],
            "license": "cc-by-4.0",
        }
