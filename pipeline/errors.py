"""User mistakes as one line: what was wrong, where, and what to do; and the exit codes.

`aletheia` prints `error: <one line>` for these and keeps the traceback behind `--debug`;
anything else (a bug) still shows its traceback. Every command exits with one code per
class of failure (`ExitCode`, docs/architecture.md "Exit codes"): whatever command meets a
dead judge engine exits 3, whatever command meets a config typo exits 2.
"""

from __future__ import annotations

import difflib
import re
import textwrap
import types
import typing
from collections.abc import Iterable
from enum import IntEnum
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


class ExitCode(IntEnum):
    """What an `aletheia` command's exit status means: one code per class of failure."""

    OK = 0
    RUN_FAILED = 1  # the work started and failed: a stage's error, an invariant, a bug
    BAD_INPUT = 2  # a mistake in what was given: a config key, a path, an option, input rows
    UNAVAILABLE = 3  # an engine, server or model the command needs cannot be had here
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as a shell reports it)


class UserError(ValueError):
    """A mistake in the user's input (config, path, option): the message says what to do."""

    exit_code: int = ExitCode.BAD_INPUT


class Unavailable(UserError):
    """What the command needs cannot be had here: a judge engine that cannot run, a model
    server that does not answer, a model or tokenizer neither cached nor reachable. One line
    saying which (and which config key names it); exit 3, never retried by the flows."""

    exit_code: int = ExitCode.UNAVAILABLE


def exit_code(exc: BaseException) -> int:
    """The exit status for `exc`: its class's `exit_code` (UserError's, Unavailable's, the
    sandbox's EngineUnavailable's), 2 for any other user mistake `one_line` reads, else 1 (a
    failed run or a bug, shown with its traceback)."""
    code = getattr(exc, "exit_code", None)
    if isinstance(code, int):
        return code
    return ExitCode.BAD_INPUT if one_line(exc) is not None else ExitCode.RUN_FAILED


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
    names = [a for name, f in model.model_fields.items() for a in (name, f.alias) if a]
    extra_keys = getattr(model, "extra_keys", None)  # a section that takes more (TRL's fields)
    return names + (list(extra_keys()) if callable(extra_keys) else [])


# The error type a model's own validator raises for a key it does not take, with the key in
# its context (`{"key": ..., "hint": ...}`): read here as pydantic's extra_forbidden on it.
UNKNOWN_KEY = "unknown_key"


def _as_extra(error: Any) -> Any:
    ctx = error.get("ctx") or {}
    if error.get("type") != UNKNOWN_KEY or "key" not in ctx:
        return error
    return {**error, "type": "extra_forbidden", "loc": (*error.get("loc", ()), ctx["key"])}


def closest(name: str, known: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The known name nearest to a misspelt one, or None when none is near."""
    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1, cutoff=cutoff)
    return close[0] if close else None


def clip(text: str, width: int = 300) -> str:
    """`text` on one line, at most `width` characters, cut between words (never inside one:
    "as root it starts d" read as a broken hint) with " ..." where it was cut."""
    return textwrap.shorten(" ".join(str(text).split()), width, placeholder=" ...")


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`; did you mean 'x'?` for a near miss, else the whole list of known names (never cut)."""
    known = list(known)
    near = closest(name, known)
    return f"; did you mean {near!r}?" if near else f"; known: {', '.join(map(str, known))}"


def _typo_twins(errors: list[Any]) -> list[Any]:
    """The errors less each "missing" key that an unknown key beside it is a typo of: a typo
    makes both (`methd` unknown, `method` missing), and it is one mistake."""
    extra = [e for e in errors if e.get("type") == "extra_forbidden" and e.get("loc")]
    twins = set()
    for e in extra:
        loc = tuple(e["loc"])
        siblings = {
            str(m["loc"][-1]): id(m)
            for m in errors
            if m.get("type") == "missing" and tuple(m.get("loc", ()))[:-1] == loc[:-1]
        }
        near = closest(str(loc[-1]), siblings)
        if near is not None:
            twins.add(siblings[near])
    return [e for e in errors if id(e) not in twins]


def _key_hint(error: Any, model: type[BaseModel] | None) -> str:
    """`key` of a further error, with its closest known key when it is a misspelt one."""
    loc = tuple(error.get("loc", ()))
    key = ".".join(map(str, loc))
    owner = _model_at(model, loc[:-1]) if model is not None and loc else None
    if error.get("type") == "extra_forbidden" and owner is not None:
        near = closest(str(loc[-1]), _fields(owner))
        return f"{key} (did you mean {near!r}?)" if near else f"{key} (unknown)"
    return key


def describe(err: ValidationError, model: type[BaseModel] | None = None) -> str:
    """One line for a pydantic error: the dotted key, what is wrong, the closest known key."""
    errors = _typo_twins([_as_extra(e) for e in err.errors()])
    extra = [e for e in errors if e.get("type") == "extra_forbidden"]
    first = extra[0] if extra else errors[0]  # a misspelt key explains the rest best
    loc = tuple(first.get("loc", ()))
    where = ".".join(str(p) for p in loc) or "(top level)"
    if first.get("type") == "extra_forbidden":
        owner = _model_at(model, loc[:-1]) if model is not None else None
        what = "unknown key"
        hint = (first.get("ctx") or {}).get("hint")
        if hint is not None:
            what += hint
        elif owner is not None:
            what += did_you_mean(str(loc[-1]), _fields(owner))
    else:
        value = first.get("input")
        shown = "" if isinstance(value, dict | list) else f" (got {value!r})"
        msg = str(first.get("msg", "invalid"))
        # pydantic prefixes a validator's own message; ours already say what and where.
        for prefix in ("Value error, ", "Assertion failed, "):
            msg = msg.removeprefix(prefix)
        if loc:  # "bias_types: unknown ..." under the key bias_types: say the key once
            msg = msg.removeprefix(f"{loc[-1]}: ")
        what = msg + shown
        if first.get("type") == "literal_error" and isinstance(value, str):  # 'tst' -> 'test'
            choices = re.findall(r"'([^']*)'", str((first.get("ctx") or {}).get("expected", "")))
            what += did_you_mean(value, choices) if choices else ""
    others = [_key_hint(e, model) for e in errors if e is not first]
    more = f" [and {len(others)} more: {', '.join(others)}]" if others else ""
    return f"{where}: {what}{more}"


def read_mapping(path: str | Path, *, what: str = "config") -> dict[str, Any]:
    """The top-level mapping of a YAML file; a missing file or bad YAML is a UserError."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise UserError(f"{what} {path} not found{near_path(path)}")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f"line {mark.line + 1}: " if mark else ""
        raise UserError(f"{path}: {at}not valid YAML ({getattr(e, 'problem', None) or e})") from e
    if not isinstance(raw, dict | None):
        raise UserError(f"{path}: a {what} is a mapping of keys at the top level")
    return raw or {}


def validate(raw: dict[str, Any], model: type[M], path: str | Path) -> M:
    """`model` from `raw` (read from `path`); a mistake is a UserError naming the file and key."""
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        raise UserError(f"{path}: {describe(e, model)}") from e
    except (ValueError, OSError) as e:  # a validator reading another file
        raise UserError(f"{path}: {' '.join(str(e).split())}") from e


def load_config(path: str | Path, model: type[M], *, what: str = "config") -> M:
    """Read a YAML config file into `model`; any mistake is a UserError naming the file and key."""
    return validate(read_mapping(path, what=what), model, path)


def near_path(path: str | Path) -> str:
    """What exists near a missing path: `; did you mean 'x'?` for a near miss of the first
    missing part, else ` (F has no 'x')` naming the deepest folder that does exist."""
    path = Path(path).expanduser()
    parts = path.parts
    depth = len(parts) - 1
    while depth > 0 and not Path(*parts[:depth]).is_dir():
        depth -= 1
    folder = Path(*parts[:depth]) if depth else Path("/" if path.is_absolute() else ".")
    missing = parts[depth] if depth < len(parts) else path.name
    try:
        names = [p.name for p in folder.iterdir()]
    except OSError:
        names = []
    near = closest(missing, names, cutoff=0.75)  # stricter than keys: .cache is not .ruff_cache
    shown = "the current folder" if str(folder) == "." else str(folder)
    if near is None:
        return f" ({shown} has no {missing!r})"
    whole = Path(folder, near, *parts[depth + 1 :])
    if whole.exists():
        return f"; did you mean {str(whole)!r}?"
    return f" ({shown} has no {missing!r}; did you mean {near!r}?)"


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
    said = isinstance(getattr(exc, "exit_code", None), int)  # a class that states its code
    if said or isinstance(exc, _USER_ERRORS):
        text = " ".join(str(exc).split()) or type(exc).__name__
        if said:  # ours (and the sandbox's EngineUnavailable) say only what is needed
            return text
        return clip(text, 1000)
    return None


def fail(exc: BaseException) -> Any:
    """Print `error: <one line>` on stderr and return the typer.Exit to raise, with the
    exception's `exit_code` (the stage commands that catch their own errors use this, so
    they read and exit like `aletheia`'s own)."""
    import typer

    typer.echo(f"error: {one_line(exc) or ' '.join(str(exc).split())}", err=True)
    code = getattr(exc, "exit_code", None)  # else: one of the command's declared user errors
    return typer.Exit(code if isinstance(code, int) else ExitCode.BAD_INPUT)
