"""`add_stage_command`: a stage's `aletheia` command, built from a declaration.

A stage command reads the stage's input files, writes its primary output and restates a
few fields of its call model as flags. Written by hand, each command spelt the same
`--problems/-p`, `--out/-o`, `--config/-c`, `--force` and `--engine/--url/--token-file`
options and copied field defaults and help by hand. Declared here (`StageCommand`), the
command's signature is generated: each input a path option, the output `--out/-o`, each
`FieldOption` an `option_for` the field (help = its description, default = its default,
`ge`/`le` = bounds), an optional `--config/-c` file of the call model, `--force`, and
`Extra` options (the judge engine's: pipeline/judge/engine_option.py `ENGINE_OPTIONS`). What stays by hand is the body
(`run`): build the call from `Given`, run the stage, print its summary.

This module loads no stage: `stage` is the Stage's name in pipeline/stages.py (a test holds
each command's inputs to that stage's), so `--help` and a dead judge engine answer before
pyarrow or torch load.
"""

from __future__ import annotations

import datetime as dt
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel

from pipeline.common.config_options import option_for


@dataclass(frozen=True)
class PathOption:
    """A file or folder the command reads (a stage input) or writes (its output)."""

    flags: tuple[str, ...]
    help: str
    required: bool = True
    exists: bool = False
    dir_okay: bool = True


@dataclass(frozen=True)
class FieldOption:
    """A flag restating `model.field` (`option_for`); its value lands in `Given.fields`."""

    model: type[BaseModel]
    field: str
    flags: tuple[str, ...] = ()
    kw: Mapping[str, Any] = field(default_factory=dict)  # to typer.Option, over the field's


def resolve_model(ref: type[BaseModel] | str) -> type[BaseModel]:
    """A model, or `"module:Name"` imported now (a config module that loads pyarrow is named
    so, to be imported when the command runs, after the judge engine has answered)."""
    if isinstance(ref, str):
        import importlib

        module, _, name = ref.partition(":")
        return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]
    return ref


def _same_model(ref: type[BaseModel] | str, model: type[BaseModel]) -> bool:
    return ref is model or ref == f"{model.__module__}:{model.__qualname__}"


@dataclass(frozen=True)
class ConfigFile:
    """`--config/-c`: a YAML file of `model`; flags of the same model override its keys."""

    model: type[BaseModel] | str  # str: "module:Name", imported when the command runs
    help: str
    what: str = "config"  # how an error names the file
    required: bool = False


@dataclass(frozen=True)
class Extra:
    """An option that is no field of the call (`--mixed`, `--source`): a typer annotation."""

    annotation: Any  # Annotated[T, typer.Option(...)]
    default: Any = inspect.Parameter.empty
    last: bool = False  # listed after the field flags (the judge engine's options)


PROBLEMS = PathOption(("--problems", "-p"), "problems Parquet")


@dataclass
class Given:
    """What the user gave a stage command, sorted: paths, field values by model, extras."""

    command: StageCommand
    paths: dict[str, Path | None]
    fields: dict[type[BaseModel], dict[str, Any]]
    extras: dict[str, Any]
    force: bool = False
    config_path: Path | None = None

    def config(
        self, model: type[BaseModel] | None = None, default: Callable[[], Any] | None = None
    ) -> Any:
        """`model` (None: the `--config` file's) from `--config` (else `default()`, else its
        defaults), with every flag of that model the user set over it; validated, so a bad
        value is one line."""
        spec = self.command.config
        if model is None:
            assert spec is not None, f"{self.command.name} takes no --config"
            model = resolve_model(spec.model)
        if spec is not None and _same_model(spec.model, model) and self.config_path is not None:
            from pipeline.errors import load_config

            base = load_config(self.config_path, model, what=spec.what)
        else:
            base = (default or model)()
        updates = {k: v for k, v in self.fields.get(model, {}).items() if v is not None}
        return model.model_validate(base.model_dump() | updates) if updates else base


@dataclass(frozen=True)
class StageCommand:
    """A command that runs one stage of the graph (pipeline/stages.py) on files."""

    name: str  # the command: "judge", or "split" within the `problems` group
    help: str
    run: Callable[[Given], None]
    stage: str | None = None  # the Stage's name; None: a check outside the graph
    inputs: Mapping[str, PathOption] = field(default_factory=dict)  # the Stage's input names
    out: PathOption = PathOption(("--out", "-o"), "output folder")
    fields: tuple[FieldOption, ...] = ()
    config: ConfigFile | None = None
    extras: Mapping[str, Extra] = field(default_factory=dict)
    force: bool = False  # `--force`: re-run even if the cached output matches
    # User mistakes the body may raise: printed as `error: <one line>`, exit 2, under any
    # caller (`aletheia` prints its own the same way; a test's CliRunner would not).
    errors: tuple[type[BaseException], ...] = ()


def _unwrap_optional(annotation: Any) -> Any:
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return rest[0] if len(rest) == 1 else annotation
    return annotation


def _is_date(opt: FieldOption) -> bool:
    return _unwrap_optional(opt.model.model_fields[opt.field].annotation) is dt.date


def _field_param(opt: FieldOption, overrides_file: bool) -> tuple[str, Any, Any]:
    """(parameter name, annotation, typer.Option default) for a field flag."""
    info = opt.model.model_fields[opt.field]
    base = _unwrap_optional(info.annotation)
    kw = dict(opt.kw)
    if info.description and "help" not in kw:  # `[#SPLIT]` would read as a rich style tag
        from rich.markup import escape

        kw["help"] = escape(info.description)
    if base is dt.date:  # typer parses datetimes; Given.fields gets the date back
        base = dt.datetime
        kw.setdefault("formats", ["%Y-%m-%d"])
    optional = overrides_file or typing.get_origin(base) is list or base is not info.annotation
    if overrides_file or typing.get_origin(base) is list:
        kw.setdefault("default", None)  # unset: the file's (or the field's) value stands
    annotation = base | None if optional else base
    return opt.field, annotation, option_for(opt.model, opt.field, *opt.flags, **kw)


def _path_param(name: str, opt: PathOption) -> inspect.Parameter:
    option = typer.Option(*opt.flags, help=opt.help, exists=opt.exists, dir_okay=opt.dir_okay)
    annotation = Annotated[Path if opt.required else Path | None, option]
    default = inspect.Parameter.empty if opt.required else None
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def _signature(cmd: StageCommand) -> tuple[list[inspect.Parameter], dict[str, FieldOption]]:
    kwonly = inspect.Parameter.KEYWORD_ONLY
    params = [_path_param(name, opt) for name, opt in cmd.inputs.items()]
    params.append(_path_param("out", cmd.out))
    if cmd.config is not None:
        option = typer.Option("--config", "-c", dir_okay=False, help=cmd.config.help)
        params.append(
            inspect.Parameter(
                "config",
                kwonly,
                default=inspect.Parameter.empty if cmd.config.required else None,
                annotation=Annotated[Path if cmd.config.required else Path | None, option],
            )
        )
    extras = [
        inspect.Parameter(name, kwonly, default=extra.default, annotation=extra.annotation)
        for name, extra in cmd.extras.items()
    ]
    params += [p for p, extra in zip(extras, cmd.extras.values(), strict=True) if not extra.last]
    by_param: dict[str, FieldOption] = {}
    for opt in cmd.fields:
        from_file = cmd.config is not None and _same_model(cmd.config.model, opt.model)
        name, annotation, default = _field_param(opt, from_file)
        if name in by_param:
            raise ValueError(f"{cmd.name}: two flags for the field {name!r}")
        by_param[name] = opt
        params.append(inspect.Parameter(name, kwonly, default=default, annotation=annotation))
    params += [p for p, extra in zip(extras, cmd.extras.values(), strict=True) if extra.last]
    if cmd.force:
        option = typer.Option("--force", help="re-run even if the cached output matches")
        params.append(
            inspect.Parameter("force", kwonly, default=False, annotation=Annotated[bool, option])
        )
    return params, by_param


def stage_callback(cmd: StageCommand) -> Callable[..., None]:
    """The typer callback of `cmd`: its signature generated, its body `cmd.run(Given)`."""
    params, by_param = _signature(cmd)
    paths = [*cmd.inputs, "out"]

    def callback(**values: Any) -> None:
        fields: dict[type[BaseModel], dict[str, Any]] = {}
        for name, opt in by_param.items():
            value = values.pop(name)
            if isinstance(value, dt.datetime) and _is_date(opt):
                value = value.date()
            fields.setdefault(opt.model, {})[opt.field] = value
        given = Given(
            command=cmd,
            paths={name: values.pop(name) for name in paths},
            fields=fields,
            config_path=values.pop("config", None),
            force=values.pop("force", False),
            extras=values,
        )
        try:
            cmd.run(given)
        except cmd.errors as e:
            from pipeline.errors import fail

            raise fail(e) from e

    callback.__name__ = cmd.name.replace("-", "_") + "_cmd"
    callback.__doc__ = cmd.help
    callback.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    callback.__annotations__ = {p.name: p.annotation for p in params}
    return callback


def add_stage_command(app: typer.Typer, cmd: StageCommand) -> None:
    """Add `cmd` to `app` (the `aletheia` app or a group such as `problems`)."""
    app.command(cmd.name)(stage_callback(cmd))
