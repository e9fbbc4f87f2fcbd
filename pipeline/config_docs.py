"""Configs that document themselves: the reference page and the JSON schemas, from the models.

Every config field carries `Field(..., description=...)`. From those, `render_reference`
writes docs/config-reference.md (one section per top-level config: dotted field path, type,
default, description) and `json_schema` gives the schema an editor checks a YAML config
against (`# yaml-language-server: $schema=...`; a comment, so it changes nothing in the
config). `aletheia config schema|reference` are the commands; tests/test_config_docs.py
keeps the page in step with the models and the schemas with the shipped configs.

The models are imported only by the functions that need them, so `aletheia --help` and
`aletheia config --help` stay fast.
"""

from __future__ import annotations

import copy
import functools
import json
import types
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from pydantic import BaseModel
from pydantic_core import PydanticUndefined, to_jsonable_python

REFERENCE = Path("docs/config-reference.md")
REGENERATE = "aletheia config reference"


def top_level() -> dict[str, type[BaseModel]]:
    """The user-facing configs by the name `aletheia config schema NAME` takes."""
    from pipeline.config import RunConfig
    from pipeline.evaluate.config import EvalConfig
    from pipeline.policy_eval.config import PolicyEvalConfig, StudyConfig
    from pipeline.train.ablation_config import AblationConfig
    from pipeline.train.config import TrainConfig

    return {
        "run": RunConfig,
        "train": TrainConfig,
        "eval": EvalConfig,
        "policy-eval": PolicyEvalConfig,
        "rlvr-study": StudyConfig,
        "ablation": AblationConfig,
    }


NAMES = ["run", "train", "eval", "policy-eval", "rlvr-study", "ablation"]  # top_level()'s keys

# What each top-level config is, for the reference page's section headings.
WHAT = {
    "run": "one build of the dataset family (`build-train`, `build-eval`, the deployments)",
    "train": "one training run of a verifier or a code policy (`train`)",
    "eval": "the evaluation of a verifier on the published eval configs (`evaluate`)",
    "policy-eval": "one code policy on one split (`evaluate-policy`)",
    "rlvr-study": "the RLVR study (`rlvr-study`)",
    "ablation": "the ablation at one size (`ablation`)",
}


# ----------------------------------------------------------------------------- models


def _models_in(tp: Any) -> Iterator[type[BaseModel]]:
    """The pydantic models an annotation names (inside unions, lists, dicts, Annotated)."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        yield tp
        return
    for arg in typing.get_args(tp):
        yield from _models_in(arg)


def reachable_models(top: type[BaseModel]) -> list[type[BaseModel]]:
    """`top` and every model reachable through its fields, in first-seen order."""
    seen: dict[type[BaseModel], None] = {}

    def walk(model: type[BaseModel]) -> None:
        if model in seen:
            return
        seen[model] = None
        for info in model.model_fields.values():
            for sub in _models_in(info.annotation):
                walk(sub)

    walk(top)
    return list(seen)


# -------------------------------------------------------------------------- reference


def type_name(tp: Any) -> str:
    """A short, stable spelling of an annotation: `int | None`, `list[str]`, `'a' | 'b'`."""
    if tp is type(None):
        return "None"
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is Annotated:
        return type_name(args[0])
    if origin is Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(type_name(a) for a in args)}]"
    if isinstance(tp, type):
        return tp.__name__
    return str(tp).replace("typing.", "")


def _default_value(model: type[BaseModel], name: str) -> Any:
    """The field's class default (PydanticUndefined when the field is required)."""
    info = model.model_fields[name]
    if info.default_factory is None:
        return info.default
    return info.default_factory()  # type: ignore[call-arg]


@functools.cache
def _bare(model: type[BaseModel]) -> BaseModel | None:
    """`model()` as validated, or None when it has required fields or refuses no input."""
    try:
        return model()
    except ValueError:  # pydantic's ValidationError is one
        return None


def _default(model: type[BaseModel], name: str, section: BaseModel | None = None) -> str:
    """The default a reader meets: the class's, unless `section` (the parent's default
    instance of this model: the run config's `mixed:` is not a bare AdversarialConfig) holds
    another value than a bare instance of the model does. A value a validator derives alike
    in both (`runner.dpo_shards` from `sample_shards`) keeps the class's `null`."""
    value = _default_value(model, name)
    if section is not None:
        bare = _bare(model)
        base = getattr(bare, name) if bare is not None else value
        if getattr(section, name) != base:
            value = getattr(section, name)
    if value is PydanticUndefined:
        return "required"
    if isinstance(value, BaseModel):
        return "(section)"
    return json.dumps(to_jsonable_python(value), sort_keys=True)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _trl_rows(model: type[BaseModel], prefix: str) -> Iterator[str]:
    """A section that takes TRL's fields (pipeline.train.config._TrlSection): the ones it gives
    Aletheia's value, with TRL's type and help, then one row for all the others."""
    allowed = model.trl_allowed()  # type: ignore[attr-defined]
    for name, (value, why) in model.trl_defaults.items():  # type: ignore[attr-defined]
        f = allowed[name]
        note = f"Aletheia's value{f' ({why})' if why else ''}; TRL's default: {f.default}."
        yield (
            f"| `{prefix}{name}` | `{_cell(f.annotation)}` | "
            f"`{_cell(json.dumps(to_jsonable_python(value), sort_keys=True))}` | "
            f"{_cell(f.help)} {_cell(note)} |"
        )
    cls = model.trl_config  # type: ignore[attr-defined]
    what = "TrainingArguments field" if cls.startswith("_") else f"field {cls} adds"
    yield (
        f"| `{prefix}*` | TRL's | TRL's | Any other {what}, by TRL's name, passed to TRL as "
        "it is (its type checked; the fields come from the installed TRL). |"
    )


def _rows(
    model: type[BaseModel],
    prefix: str,
    stack: tuple[type, ...],
    section: BaseModel | None = None,
) -> Iterator[str]:
    """Rows of `model`'s fields; `section` is the parent's default instance of it, whose
    values are the defaults shown (a field of a list item or of a union has none)."""
    if hasattr(model, "trl_defaults"):
        yield from _trl_rows(model, prefix)
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        yield (
            f"| `{path}` | `{_cell(type_name(info.annotation))}` | "
            f"`{_cell(_default(model, name, section))}` | {_cell(info.description or '')} |"
        )
        subs = [m for m in _models_in(info.annotation) if m not in stack]
        container = typing.get_origin(info.annotation) in (list, dict) or any(
            typing.get_origin(a) in (list, dict) for a in typing.get_args(info.annotation)
        )
        value = getattr(section, name) if section is not None else _default_value(model, name)
        for sub in subs:
            if container:
                where = f"{path}[]" if len(subs) == 1 else f"{path}[{sub.__name__}]"
            else:
                where = path if len(subs) == 1 else f"{path}({sub.__name__})"
            own = value if not container and type(value) is sub else None
            yield from _rows(sub, f"{where}.", (*stack, sub), own)


def render_reference(models: Mapping[str, type[BaseModel]]) -> str:
    """docs/config-reference.md: one section per top-level config, its fields (nested ones
    by dotted path; `a[]` an item of a list, `a[Model]` the item when items take several
    shapes) with their type, default and description. Deterministic: models' field order."""
    out = [
        "# Config reference",
        "",
        f"Generated from the config models by `{REGENERATE}`; do not edit by hand.",
        "A field's description is its `Field(description=...)`; a JSON schema of each config",
        "is printed by `aletheia config schema NAME`. A section's defaults are the ones its",
        "config gives it where they differ from a bare section's (the run config's `mixed:`",
        "shows Mixed's share and bias types, `adv:` Adv's).",
        "",
    ]
    for key, model in models.items():
        doc = (model.__doc__ or "").strip().split("\n\n")[0]
        out += [f"## `{key}`: {model.__name__}", ""]
        if key in WHAT:
            out += [f"What it configures: {WHAT[key]}.", ""]
        if doc:
            out += [" ".join(doc.split()), ""]
        out += ["| field | type | default | description |", "| --- | --- | --- | --- |"]
        out += list(_rows(model, "", (model,)))
        out.append("")
    return "\n".join(out)


# ----------------------------------------------------------------------------- schema

# Shorthands a `mode="before"` validator rewrites into the full form: declared here so the
# schema accepts every config the models accept. (model name, field) -> the extra shapes.
_POOL_FILE = {"type": "string", "description": "a pool config file (a mapping with `sources`)"}
SHORTHANDS: dict[tuple[str, str], list[dict[str, Any]]] = {
    # RunConfig._pool_files: `sample: configs/pools/x.yaml`, or a list of such files.
    ("RunConfig", "sample"): [_POOL_FILE, {"type": "array", "items": _POOL_FILE}],
    # JudgeModelSpec._shorthand: `backend: transformers` is `backend: {type: transformers}`.
    ("JudgeModelSpec", "backend"): [{"type": "string", "description": "the backend type"}],
}
# Older key names a `mode="before"` validator renames: (model name, old key) -> new key.
RENAMED: dict[tuple[str, str], str] = {
    ("JudgeModelSpec", "model_path"): "model",  # JudgeModelSpec._shorthand
}


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's validation schema, with the shorthands its before-validators accept.
    Every section forbids unknown keys, so a typo (`judge: {chunk_siz: 1}`) is refused."""
    schema = copy.deepcopy(model.model_json_schema(mode="validation"))
    defs = schema.get("$defs", {})
    for (owner, field), shapes in SHORTHANDS.items():
        node = schema if owner == model.__name__ else defs.get(owner)
        if node is None or field not in node.get("properties", {}):
            continue
        prop = node["properties"][field]
        keep = {k: prop.pop(k) for k in ("title", "description") if k in prop}
        node["properties"][field] = {**keep, "anyOf": [prop, *shapes]}
    for (owner, old), key in RENAMED.items():
        node = schema if owner == model.__name__ else defs.get(owner)
        if node is None or key not in node.get("properties", {}):
            continue
        node["properties"][old] = {
            **node["properties"][key],
            "description": f"the older name of `{key}`",
        }
        if key in node.get("required", []):  # either name may be given
            node["required"].remove(key)
            node.setdefault("anyOf", []).extend([{"required": [key]}, {"required": [old]}])
    return schema


# --------------------------------------------------------------------------- commands


def check_reference(path: Path = REFERENCE) -> str | None:
    """None when `path` holds what the models render now, else a one-line reason."""
    want = render_reference(top_level())
    if not path.is_file():
        return f"{path} is missing; write it with `{REGENERATE}`"
    if path.read_text(encoding="utf-8") != want:
        return f"{path} is out of date with the config models; regenerate it with `{REGENERATE}`"
    return None


def register(app: typer.Typer) -> None:
    config_app = typer.Typer(
        help="The config models' JSON schemas and the generated reference page.",
        no_args_is_help=True,
    )
    app.add_typer(config_app, name="config")

    @config_app.command("schema")
    def schema_cmd(
        name: Annotated[
            str, typer.Argument(help=f"which config: {', '.join(NAMES)}", show_default=False)
        ] = "run",
    ) -> None:
        """Print a config's JSON schema (for editors: yaml-language-server, check-jsonschema)."""
        models = top_level()
        if name not in models:
            from pipeline.errors import UserError, did_you_mean

            raise UserError(f"no config {name!r}{did_you_mean(name, models)}")
        typer.echo(json.dumps(json_schema(models[name]), indent=2, sort_keys=True))

    @config_app.command("reference")
    def reference_cmd(
        out: Annotated[Path, typer.Option("--out", "-o", help="the page to write")] = REFERENCE,
        check: Annotated[
            bool, typer.Option("--check", help="fail if the page differs; write nothing")
        ] = False,
    ) -> None:
        """Write docs/config-reference.md from the config models (with --check: compare only)."""
        if check:
            problem = check_reference(out)
            if problem:
                from pipeline.errors import UserError

                raise UserError(problem)
            typer.echo(f"{out} is up to date")
            return
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render_reference(top_level()), encoding="utf-8")
        typer.echo(f"wrote {out}")
