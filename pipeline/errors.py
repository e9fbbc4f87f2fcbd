"""User mistakes as one line: what was wrong, where, and what to do.

`aletheia` prints `error: <one line>` for these and keeps the traceback behind `--debug`;
anything else (a bug) still shows its traceback.
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError


class UserError(ValueError):
    """A mistake in the user's input (config, path, option): the message says what to do."""


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model that owns the last element of `loc` (list indices skipped)."""
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return None
        inner = _model_in(field.annotation)
        if inner is None:
            return None
        model = inner
    return model


def _fields(model: type[BaseModel]) -> list[str]:
    return [a for name, f in model.model_fields.items() for a in (name, f.alias) if a]


def describe(err: ValidationError, model: type[BaseModel] | None = None) -> str:
    """One line for a pydantic error: the dotted key, what is wrong, the closest known key."""
    errors = err.errors()
    first = errors[0]
    loc = tuple(first.get("loc", ()))
    where = ".".join(str(p) for p in loc) or "(top level)"
    if first.get("type") == "extra_forbidden":
        owner = _model_at(model, loc[:-1]) if model is not None else None
        what = "unknown key"
        if owner is not None:
            close = difflib.get_close_matches(str(loc[-1]), _fields(owner), n=1, cutoff=0.6)
            what += (
                f"; did you mean {close[0]!r}?"
                if close
                else f"; known: {', '.join(_fields(owner))}"
            )
    else:
        value = first.get("input")
        shown = "" if isinstance(value, dict | list) else f" (got {value!r})"
        what = first.get("msg", "invalid") + shown
    more = f" [and {len(errors) - 1} more]" if len(errors) > 1 else ""
    return f"{where}: {what}{more}"


_USER_ERRORS: tuple[type[BaseException], ...] = (
    UserError,
    ValidationError,
    FileNotFoundError,
    NotADirectoryError,
    IsADirectoryError,
    PermissionError,
    ValueError,
    TypeError,
)


def one_line(exc: BaseException) -> str | None:
    """The one-line message for a user mistake, or None for what looks like a bug."""
    if isinstance(exc, ValidationError):
        return describe(exc)
    try:
        import yaml

        if isinstance(exc, yaml.YAMLError):
            mark = getattr(exc, "problem_mark", None)
            at = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
            return f"YAML: {at}{getattr(exc, 'problem', None) or exc}"
    except ImportError:  # pragma: no cover - yaml is a dependency
        pass
    if isinstance(exc, TypeError) and not isinstance(exc, UserError):
        tb: types.TracebackType | None = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        # A TypeError raised from our own validation reads as a message; one from deep inside
        # a library call is most likely a bug, so it keeps its traceback.
        if tb is None or "/pipeline/" not in tb.tb_frame.f_code.co_filename:
            return None
    if isinstance(exc, _USER_ERRORS):
        text = " ".join(str(exc).split()) or type(exc).__name__
        return text if len(text) <= 400 else text[:397] + "..."
    return None
