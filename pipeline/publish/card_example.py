"""Example rows: each config's first row whole, as a YAML file of the release, and a
one-line excerpt of it for the card.

The row is the config's first (of its `train` split, or an evaluation config's `test`
split: the one to evaluate on). The file shows it as YAML so programs, statements and
responses keep their line breaks; it is the row exactly (`yaml.safe_load` gives it back:
a text YAML cannot show as a block, one with spaces at a line end, is quoted instead). The
card's table shows a few fields of it cut to one short line each, marked `…` where cut.
"""

from __future__ import annotations

import html
from typing import Any

import pyarrow as pa
import yaml

EXAMPLES_DIR = "details/examples"  # in the Hub folder: one <config>.yaml each
EXCERPT_CHARS = 48  # a text cell of the card's table
EXCERPT_ITEMS = 5  # a list of short values shown whole up to this many items

# The fields the card's table shows, per kind of config (schemas/dataset_configs.py).
EXAMPLE_FIELDS: dict[str, tuple[str, ...]] = {
    "instances": ("query", "candidates", "verdicts", "chosen_answer", "generator", "modification"),
    "dpo": ("prompt", "chosen", "rejected", "chosen_answer", "rejected_answer", "chosen_source"),
    "questions": ("query", "test_mode", "tests", "time_limit_s", "memory_limit_mb"),
}


def example_path(config: str) -> str:
    """The example file of a config, relative to the Hub folder."""
    return f"{EXAMPLES_DIR}/{config}.yaml"


class _RowDumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks (`|`), so code reads as code."""


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None  # YAML quotes it instead where a block cannot hold it
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


def _list(dumper: yaml.SafeDumper, data: list) -> yaml.SequenceNode:
    """Lists of short scalars on one line (`[WA, AC, RE]`), others one item per line."""
    flat = all(v is None or isinstance(v, (int, float, bool)) or
               (isinstance(v, str) and "\n" not in v and len(v) <= 40) for v in data)  # fmt: skip
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


_RowDumper.add_representer(str, _str)
_RowDumper.add_representer(list, _list)


def first_row(table: pa.Table) -> dict[str, Any] | None:
    return table.slice(0, 1).to_pylist()[0] if table.num_rows else None


def example_yaml(table: pa.Table) -> str:
    """The table's first row, whole, as YAML in the schema's field order ('' with no rows)."""
    row = first_row(table)
    if row is None:
        return ""
    return yaml.dump(row, Dumper=_RowDumper, sort_keys=False, allow_unicode=True, width=100)


def _cut(text: str, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


# Characters Markdown would read (emphasis, code, links, escapes, cells) as entities.
_MARKDOWN = str.maketrans({c: f"&#{ord(c)};" for c in "\\`*_[]|"})


def _ends(text: str, limit: int) -> str:
    """The start and the end of a text, cut in the middle where long."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    half = (limit - 3) // 2
    return flat[:half].rstrip() + " … " + flat[-half:].lstrip()


def excerpt(value: Any) -> str:
    """One table cell: a value cut to one short line, shown as its characters (HTML and
    Markdown syntax in it written as entities)."""
    if value is None:
        text = "null"
    elif isinstance(value, str):
        text = _cut(value)
    elif isinstance(value, list) and value and isinstance(value[0], dict) and "role" in value[0]:
        # chat messages: their roles, and the start and end of the last one (a response's
        # answer is at its end)
        roles = " + ".join(m["role"] for m in value)
        text = f"[{roles}] " + _ends(value[-1]["content"], EXCERPT_CHARS - len(roles) - 3)
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        text = f"{len(value)} item{'s' if len(value) > 1 else ''}"
    elif isinstance(value, list) and all(not isinstance(v, str) or len(v) <= 8 for v in value):
        shown = ", ".join("null" if v is None else str(v) for v in value[:EXCERPT_ITEMS])
        text = shown + (f", … ({len(value)})" if len(value) > EXCERPT_ITEMS else "")
    elif isinstance(value, list):
        text = f"{len(value)}: " + _cut(str(value[0]) if value else "", EXCERPT_CHARS - 8)
    else:
        text = str(value)
    return html.escape(text, quote=False).translate(_MARKDOWN)
