"""One example row per config for the card, cut to a readable length.

The row is the config's first (of its `train` split, or an evaluation config's `test`
split: the one to evaluate on), shown as YAML so programs and statements keep their line
breaks (spaces at the end of a line are not shown). Long texts are cut after `MAX_LINES` lines or `MAX_CHARS` characters and long lists
after `MAX_ITEMS` items, each cut marked with what was left out, so no reader mistakes a
shortened value for the real one.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import yaml

MAX_LINES = 12
MAX_CHARS = 400
MAX_ITEMS = 5


def cut_text(text: str) -> str:
    # Spaces at line ends are dropped from the shown copy: YAML cannot show a text that has
    # them as a block, and they are invisible anyway.
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    kept = "\n".join(text.split("\n")[:MAX_LINES])[:MAX_CHARS].rstrip()
    rest = text[len(kept) :]
    if not rest.strip():  # nothing but white space left: shown whole
        return text
    more_lines = rest.count("\n")
    lines = f", {more_lines} more line{'s' if more_lines > 1 else ''}" if more_lines else ""
    what = f"{len(rest)} more characters{lines}"
    return kept + f"\n[... cut here: {what}]"


def cut_value(value: Any) -> Any:
    if isinstance(value, str):
        return cut_text(value)
    if isinstance(value, list):
        kept = [cut_value(v) for v in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            kept.append(f"[... cut here: {len(value) - MAX_ITEMS} more items]")
        return kept
    if isinstance(value, dict):
        return {k: cut_value(v) for k, v in value.items()}
    return value


class _CardDumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks (`|`), so code reads as code."""


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


def _list(dumper: yaml.SafeDumper, data: list) -> yaml.SequenceNode:
    """Lists of short scalars on one line (`[WA, AC, RE]`), others one item per line."""
    flat = all(v is None or isinstance(v, (int, float, bool)) or
               (isinstance(v, str) and "\n" not in v and len(v) <= 40) for v in data)  # fmt: skip
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


_CardDumper.add_representer(str, _str)
_CardDumper.add_representer(list, _list)


def example_yaml(table: pa.Table) -> str:
    """The table's first row, cut, as YAML in the schema's field order ('' with no rows)."""
    if table.num_rows == 0:
        return ""
    row = table.slice(0, 1).to_pylist()[0]
    return yaml.dump(
        {k: cut_value(v) for k, v in row.items()},
        Dumper=_CardDumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
    ).rstrip("\n")
