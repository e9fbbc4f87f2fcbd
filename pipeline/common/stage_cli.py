"""`add_stage_command`: a stage's `aletheia` command, built from a declaration.

A stage command reads the stage's input files, writes its primary output and restates a
few fields of its call model as flags. Written by hand, each command spelt the same
`--problems/-p`, `--out/-o`, `--config/-c`, `--force` and `--engine/--url/--token-file`
options and copied field defaults and help by hand. Declared here (`StageCommand`), the
command's signature is generated: each input a path option, the output `--out/-o`, each
`FieldOption` an `option_for` the field (help = its description, default = its default,
`ge`/`le` = bounds), the settings (`ConfigFile`: `--config/-c` the run config, whose
section for this stage is read as the build reads it, or a file of that section alone),
`--force`, and `Extra` options (the judge engine's: pipeline/judge/engine_option.py
`engine_options`). What stays by hand is the body (`run`): build the call from `Given`, run
the stage, print its summary.

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
    file_okay: bool = True


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
    """Where the command's settings (a `model`) come from, as in every `aletheia` command:
    `--config/-c` is the run config (configs/demo.yaml: the build's, read as the build reads
    it), whose `section` is this stage's; `flag` (`--pool`, `--stage-config`) is a YAML file
    of that section alone (configs/pools/, configs/instances/). Flags of the same model
    override either; neither: the model's defaults (or `required`: one of them is needed)."""

    model: type[BaseModel] | str  # str: "module:Name", imported when the command runs
    help: str  # the section file's
    # the run config's key for it: "sample", "assemble", ...; None: a command outside the build
    # (best-of-n), whose own config file is `--config/-c`
    section: str | None = None
    flag: str = "--stage-config"
    what: str = "stage config"  # how an error names the section file
    # what the run config's section gives besides the settings, said in `--config`'s help
    # (evaluate: "its model unless --model or --responses")
    note: str = ""
    required: bool = False
    # The section of a run config to take when it is not `section` alone (`adversarial
    # --mixed`: the `mixed:` section): (run config, the command's extras) -> the section.
    pick: Callable[[Any, Mapping[str, Any]], BaseModel] | None = None


class RunConfigReader:
    """How a stage command reads a run config: pipeline/config.py sits a layer above the
    stages, so the app shell (aletheia/cli.py) hands its reader in (`use`)."""

    read: Callable[[Path], Any] | None = None  # a path -> the resolved RunConfig
    keys: Callable[[], set[str]] | None = None  # the run config's top-level keys

    @classmethod
    def use(cls, read: Callable[[Path], Any], keys: Callable[[], set[str]]) -> None:
        cls.read, cls.keys = staticmethod(read), staticmethod(keys)  # type: ignore[assignment]


def _top_keys(path: Path) -> set[str]:
    from pipeline.errors import read_mapping

    return set(read_mapping(path))


def _model_keys(model: type[BaseModel]) -> set[str]:
    return {a for name, f in model.model_fields.items() for a in (name, f.alias) if a}


def read_run_config(spec: ConfigFile, path: Path) -> Any:
    """The run config at `path`, resolved as a build resolves it; a file that is the
    command's section alone is told to go to `spec.flag`."""
    from pipeline.errors import UserError

    if RunConfigReader.read is None:
        raise UserError(f"--config {path}: run configs are read through the `aletheia` command")
    try:
        return RunConfigReader.read(path)
    except UserError:
        keys = _top_keys(path)  # the file read, it is a mapping: which kind of file is it?
        if keys and keys <= _model_keys(resolve_model(spec.model)):
            raise UserError(
                f"--config {path}: a run config is expected (such as configs/demo.yaml), and "
                f"this file holds the `{spec.section}:` section alone; pass it as "
                f"{spec.flag} {path}"
            ) from None
        raise


def read_section_file(spec: ConfigFile, path: Path) -> Any:
    """The section file at `path`; a run config given there is told to go to `--config`."""
    from pipeline.errors import UserError, load_config

    model = resolve_model(spec.model)
    if spec.section is None:  # the command's own config file: no run config to confuse it with
        return load_config(path, model, what=spec.what)
    keys = _top_keys(path)
    run_keys = RunConfigReader.keys() if RunConfigReader.keys is not None else set()
    foreign = sorted(keys - _model_keys(model))
    if foreign and (spec.section in keys or set(foreign) <= run_keys):
        raise UserError(
            f"{spec.flag} {path}: this is a run config (it has {', '.join(foreign[:3])}), "
            f"not the `{spec.section}:` section alone; pass it as --config {path} (-c)"
        )
    return load_config(path, model, what=spec.what)


@dataclass(frozen=True)
class Extra:
    """An option that is no field of the call (`--mixed`, `--source`): a typer annotation."""

    annotation: Any  # Annotated[T, typer.Option(...)]
    default: Any = inspect.Parameter.empty
    last: bool = False  # listed after the field flags (the judge engine's options)


def option(annotation: Any, *flags: str, default: Any = None, **kw: Any) -> Extra:
    """An `Extra` from its type, flags and `typer.Option` keywords (default None: unset)."""
    return Extra(Annotated[annotation, typer.Option(*flags, **kw)], default)


PROBLEMS = PathOption(("--problems", "-p"), "problems Parquet")


@dataclass
class Given:
    """What the user gave a stage command, sorted: paths, field values by model, extras."""

    command: StageCommand
    paths: dict[str, Path | None]
    fields: dict[type[BaseModel], dict[str, Any]]
    extras: dict[str, Any]
    force: bool = False
    run_config_path: Path | None = None  # --config/-c
    section_path: Path | None = None  # the ConfigFile's flag (--pool, --stage-config)
    _run: Any = None

    def run_config(self) -> Any:
        """The run config `--config` names (read and resolved once), or None."""
        spec = self.command.config
        if self.run_config_path is None or spec is None:
            return None
        if self._run is None:
            self._run = read_run_config(spec, self.run_config_path)
        return self._run

    def config(
        self, model: type[BaseModel] | None = None, default: Callable[[], Any] | None = None
    ) -> Any:
        """`model` (None: the command's ConfigFile's) from `--config`'s section or the
        section file (else `default()`, else its defaults), with every flag of that model the
        user set over it; validated, so a bad value is one line."""
        spec = self.command.config
        if model is None:
            assert spec is not None, f"{self.command.name} takes no config"
            model = resolve_model(spec.model)
        mine = spec is not None and _same_model(spec.model, model)
        if mine and self.run_config_path is not None:
            assert spec is not None
            run = self.run_config()
            base = spec.pick(run, self.extras) if spec.pick else getattr(run, spec.section)
        elif mine and self.section_path is not None:
            assert spec is not None
            base = read_section_file(spec, self.section_path)
        else:
            base = (default or model)()
        updates = {k: v for k, v in self.fields.get(model, {}).items() if v is not None}
        return model.model_validate(base.model_dump() | updates) if updates else base


@dataclass(frozen=True)
class StageCommand:
    """A command that runs one stage of the graph (pipeline/stages.py) on files, or a command
    of the same shape outside it (`train`, `evaluate`, `evaluate-policy`: files in, a folder
    out, a config file and flags over it)."""

    name: str  # the command: "judge", or "split" within the `problems` group
    help: str
    run: Callable[[Given], None]
    # the Stage's name, whose inputs the command's are held to (a test); None: no such stage
    stage: str | None = None
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
    option = typer.Option(
        *opt.flags,
        help=opt.help,
        exists=opt.exists,
        dir_okay=opt.dir_okay,
        file_okay=opt.file_okay,
    )
    annotation = Annotated[Path if opt.required else Path | None, option]
    default = inspect.Parameter.empty if opt.required else None
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def _signature(cmd: StageCommand) -> tuple[list[inspect.Parameter], dict[str, FieldOption]]:
    kwonly = inspect.Parameter.KEYWORD_ONLY
    params = [_path_param(name, opt) for name, opt in cmd.inputs.items()]
    params.append(_path_param("out", cmd.out))
    if cmd.config is not None and cmd.config.section is None:
        option = typer.Option("--config", "-c", dir_okay=False, help=cmd.config.help)
        params.append(
            inspect.Parameter(
                "section_file", kwonly, default=None, annotation=Annotated[Path | None, option]
            )
        )
    elif cmd.config is not None:
        spec = cmd.config
        either = f" (this or {spec.flag} is required)" if spec.required else ""
        run_help = (
            f"run config YAML (configs/demo.yaml): its `{spec.section}:` section, as the "
            f"build reads it{spec.note and ' (' + spec.note + ')'}{either}"
        )
        for name, flags, text in (
            ("config", ("--config", "-c"), run_help),
            ("section_file", (spec.flag,), spec.help + (" (or --config)" if spec.required else "")),
        ):
            option = typer.Option(*flags, dir_okay=False, help=text)
            params.append(
                inspect.Parameter(
                    name, kwonly, default=None, annotation=Annotated[Path | None, option]
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
            run_config_path=values.pop("config", None),
            section_path=values.pop("section_file", None),
            force=values.pop("force", False),
            extras=values,
        )
        spec = cmd.config
        if spec is not None and given.run_config_path and given.section_path:
            raise typer.BadParameter(f"give --config or {spec.flag}, not both")
        if spec is not None and spec.required and not (given.run_config_path or given.section_path):
            raise typer.BadParameter(
                f"give --config RUN_CONFIG (its `{spec.section}:` section) or {spec.flag} FILE"
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
