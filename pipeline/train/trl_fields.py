"""TRL's config fields, read from TRL's own dataclasses - without importing TRL.

A training section (`optim`, `grpo`, `dpo`, `sft`, ...) takes any field of its TRL config
class by TRL's name, as TRL's own `TrlParser` does: the names, annotations, defaults and help
come from the dataclasses in the installed TRL (and transformers' `TrainingArguments` under
them), so a field a new TRL adds needs no code here. They are read from the source with `ast`:
importing TRL pulls in torch (tens of seconds), and a config is validated by preflight and
`--dry-run`, which must stay quick.
"""

from __future__ import annotations

import ast
import copy
import difflib
import importlib.util
import typing
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from pipeline.errors import UNKNOWN_KEY

# Where each class is defined (a package's __init__ re-exports it lazily, so `from
# transformers import TrainingArguments` does not name the file).
CLASS_MODULES: dict[str, str] = {
    "TrainingArguments": "transformers.training_args",
    "_BaseConfig": "trl.trainer.base_config",
    "GRPOConfig": "trl.trainer.grpo_config",
    "DPOConfig": "trl.trainer.dpo_config",
    "SFTConfig": "trl.trainer.sft_config",
}
SHARED = "_BaseConfig"  # TRL's base of every trainer config: TrainingArguments + TRL's defaults


@dataclass(frozen=True)
class TrlField:
    name: str
    annotation: str  # as written in TRL's source
    default: str  # its source text (a literal, or the expression TRL computes it from)
    help: str
    owner: str  # the class that declares it (last: a subclass's override wins)


def _source(module: str) -> Path:
    """The module's file, found without importing its package."""
    top, *rest = module.split(".")
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"{top} is not installed: the training configs read TRL's fields")
    return Path(next(iter(spec.submodule_search_locations)), *rest).with_suffix(".py")


def _class(name: str) -> ast.ClassDef:
    tree = ast.parse(_source(CLASS_MODULES[name]).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise RuntimeError(f"{CLASS_MODULES[name]} defines no class {name}: TRL changed its layout")


def _field(stmt: ast.AnnAssign, owner: str) -> TrlField:
    name = stmt.target.id  # type: ignore[union-attr]
    default, help_text = "required", ""
    value = stmt.value
    if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "field":
        for kw in value.keywords:
            if kw.arg == "default":
                default = ast.unparse(kw.value)
            elif kw.arg == "default_factory":
                default = f"{ast.unparse(kw.value)}()"
            elif kw.arg == "metadata" and isinstance(kw.value, ast.Dict):
                for k, v in zip(kw.value.keys, kw.value.values, strict=True):
                    if isinstance(k, ast.Constant) and k.value == "help":
                        try:
                            help_text = str(ast.literal_eval(v))
                        except ValueError:
                            help_text = ast.unparse(v)
    elif value is not None:
        default = ast.unparse(value)
    help_text = " ".join(help_text.split()).replace("%%", "%")  # escaped for argparse
    return TrlField(name, ast.unparse(stmt.annotation), default, help_text, owner)


@cache
def trl_fields(name: str) -> dict[str, TrlField]:
    """Every field of the config class `name`, its bases' first (a subclass's override wins)."""
    node = _class(name)
    out: dict[str, TrlField] = {}
    for base in node.bases:
        base_name = ast.unparse(base)
        if base_name != "object":
            if base_name not in CLASS_MODULES:
                raise RuntimeError(f"{name}'s base {base_name}: not in trl_fields.CLASS_MODULES")
            out |= trl_fields(base_name)
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if not stmt.annotation or "ClassVar" in ast.unparse(stmt.annotation):
                continue
            out[stmt.target.id] = _field(stmt, name)
    return out


def own_fields(name: str) -> dict[str, TrlField]:
    """The fields `name` adds over TRL's shared base (GRPOConfig's own: num_generations, ...)."""
    shared = trl_fields(SHARED)
    return {k: f for k, f in trl_fields(name).items() if k not in shared}


# Names an annotation may use that validate as they read; any other (TRL's enums:
# SchedulerType, OptimizerNames, ...) is taken as Any here and left to TRL's own checks.
_NAMES: dict[str, Any] = {"int": int, "float": float, "str": str, "bool": bool, "dict": dict,
                          "list": list, "tuple": tuple, "None": None, "Any": Any,
                          "Literal": typing.Literal, "Optional": typing.Optional,
                          "Union": typing.Union}  # fmt: skip


class _Unknown(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.AST:
        return node if node.id in _NAMES else ast.copy_location(ast.Name("Any", ast.Load()), node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        return ast.copy_location(ast.Name("Any", ast.Load()), node)


@cache
def _adapter(annotation: str) -> TypeAdapter[Any]:
    tree = _Unknown().visit(ast.parse(annotation, mode="eval"))
    try:
        tp = eval(compile(ast.fix_missing_locations(tree), "<trl>", "eval"), {**_NAMES})
    except Exception:  # noqa: BLE001 - an annotation we cannot spell: TRL checks it
        tp = Any
    return TypeAdapter(tp)


def coerce(field: TrlField, value: Any, where: str) -> Any:
    """`value` as TRL's annotation reads it (YAML's `1e-6` is a string: a float here)."""
    try:
        return _adapter(field.annotation).validate_python(value)
    except ValidationError as e:
        reason = e.errors()[0]["msg"]
        raise ValueError(
            f"{where}.{field.name}: {value!r} is not {field.annotation} ({reason})"
        ) from e


def like_default(value: Any, default: Any) -> Any:
    """A number in the type of Aletheia's default for the field (`logging_steps: 1` stays an
    int, `num_train_epochs: 1` is 1.0), so a config's dump - its cache key - reads as before
    TRL's annotations were used."""
    if isinstance(value, bool) or isinstance(default, bool):
        return value
    if isinstance(default, float) and isinstance(value, int):
        return float(value)
    if isinstance(default, int) and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def unknown_field(name: str, where: str, allowed: dict[str, Any], cls: str) -> str:
    """The message for a key no field takes, naming the closest that does."""
    return f"{where}.{name}: unknown key{unknown_hint(name, allowed, cls)}"


def unknown_hint(name: str, allowed: dict[str, Any], cls: str) -> str:
    """`; did you mean 'x'?`, or where the field belongs, or whose fields were looked in (the
    full list of TRL's fields is too long for one line: the config reference has it)."""
    close = difflib.get_close_matches(name, list(allowed), n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]!r}?"
    if name in trl_fields(SHARED):
        return f"; {name} is a TrainingArguments field: set it under optim"
    return f"; neither ours nor {cls}'s (docs/config-reference.md lists them)"


def _trl_schema(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """The JSON schema of a TRL-backed section names TRL's fields, so an editor refuses a typo."""
    fields = model.trl_allowed()  # type: ignore[attr-defined]
    props = schema.setdefault("properties", {})
    for name, f in fields.items():
        props.setdefault(name, {"description": f"TRL {f.owner}.{name} ({f.annotation}): {f.help}"})
    schema["additionalProperties"] = False


def _within(limit: Any, value: Any, where: str) -> None:
    try:
        TypeAdapter(limit).validate_python(value)
    except ValidationError as exc:
        reason = "; ".join(e["msg"] for e in exc.errors())
        raise ValueError(f"{where}: {value!r}: {reason}") from None


class TrlSection(BaseModel):
    """A section that takes, besides its declared fields (ours), any field of a TRL config
    class by TRL's name (`trl_config`; for a method's section only the fields that class adds
    over TrainingArguments, which go under `optim`). The value is checked against TRL's
    annotation; a field left out takes Aletheia's value (`trl_defaults`), else TRL's own.
    Unknown keys are refused (a typo), as every config section refuses them."""

    model_config = ConfigDict(extra="allow", json_schema_extra=_trl_schema)
    section: ClassVar[str]
    trl_config: ClassVar[str]
    # TRL field -> (Aletheia's value, where it comes from). Every one is in the section's dump
    # (the run's config.json and the ablation cells' cache key), set or not.
    trl_defaults: ClassVar[dict[str, tuple[Any, str]]] = {}
    # TRL field -> the narrower type this project needs (a bound TRL checks only once
    # training starts, hours into a run on a cluster; here preflight refuses it).
    trl_limits: ClassVar[dict[str, Any]] = {}

    @classmethod
    def trl_allowed(cls) -> dict[str, TrlField]:
        fields = trl_fields(SHARED) if cls.trl_config == SHARED else own_fields(cls.trl_config)
        return {k: f for k, f in fields.items() if k not in cls.model_fields}

    @classmethod
    def extra_keys(cls) -> list[str]:
        """The keys this section takes besides its fields (for `did you mean`)."""
        return list(cls.trl_allowed())

    @model_validator(mode="before")
    @classmethod
    def _trl_fields(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        ours = {k: v for k, v in data.items() if k in cls.model_fields}
        theirs = {k: v for k, v in data.items() if k not in cls.model_fields}
        if not theirs and not cls.trl_defaults:
            return data
        allowed = cls.trl_allowed()
        trl = {k: copy.deepcopy(v) for k, (v, _) in cls.trl_defaults.items()}
        for key, value in theirs.items():
            if key not in allowed:
                # pipeline.errors.describe reads it as the unknown key `section.key`.
                hint = unknown_hint(key, {**cls.model_fields, **allowed}, cls.trl_config)
                raise PydanticCustomError(
                    UNKNOWN_KEY, "{key}: unknown key{hint}", {"key": key, "hint": hint}
                )
            default = cls.trl_defaults.get(key, (None, ""))[0]
            trl[key] = like_default(coerce(allowed[key], value, cls.section), default)
        for key, limit in cls.trl_limits.items():
            if key in trl:
                _within(limit, trl[key], f"{cls.section}.{key}")
        return {**ours, **trl}

    def trl_args(self) -> dict[str, Any]:
        """The TRL fields of this section, by TRL's names, as the TRL config takes them."""
        return copy.deepcopy(dict(self.__pydantic_extra__ or {}))
