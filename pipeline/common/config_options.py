"""`option_for`: a command-line flag that restates a config field, read from the field.

A flag such as `judge --chunk-size` sets the same knob as `judge.chunk_size` in a run
config. Written by hand, its help and default drift from the field's; built here, the help
is the field's description, the default the field's default, and `ge`/`le` bounds become
the option's `min`/`max` (strict `gt`/`lt` bounds stay with the model, which validates the
value when the command builds its config).

    chunk_size: Annotated[int, option_for(JudgeConfig, "chunk_size")] = ...
"""

from __future__ import annotations

from typing import Any

import annotated_types
import typer
from pydantic import BaseModel
from pydantic_core import PydanticUndefined


def field_default(model: type[BaseModel], field: str) -> Any:
    """The field's default (its factory called), or `...` when the field is required."""
    info = model.model_fields[field]
    if info.default_factory is not None:
        return info.default_factory()  # type: ignore[call-arg]
    return ... if info.default is PydanticUndefined else info.default


def field_bounds(model: type[BaseModel], field: str) -> dict[str, Any]:
    """The inclusive bounds a typer option can enforce: `min` from `ge`, `max` from `le`."""
    out: dict[str, Any] = {}
    for meta in model.model_fields[field].metadata:
        if isinstance(meta, annotated_types.Ge):
            out["min"] = meta.ge
        elif isinstance(meta, annotated_types.Le):
            out["max"] = meta.le
    return out


def option_for(model: type[BaseModel], field: str, *flags: str, **kw: Any) -> Any:
    """A `typer.Option` for `model.field`: its help, default and bounds from the field.

    `flags` are the option's names (none: typer derives `--field-name`); `kw` goes to
    `typer.Option` and wins over what the field gives (e.g. `help=` for a flag whose
    meaning on the command line is narrower than the field's).
    """
    if field not in model.model_fields:
        raise KeyError(f"{model.__name__} has no field {field!r}")
    info = model.model_fields[field]
    given: dict[str, Any] = {**field_bounds(model, field)}
    if info.description:
        given["help"] = info.description
    given.update(kw)
    default = given.pop("default", field_default(model, field))
    return typer.Option(default, *flags, **given)
