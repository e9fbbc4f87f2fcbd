"""Configs that document themselves : every field described, the generated
reference page in step with the models, the JSON schemas accepting every shipped config and
refusing a typo, and `option_for` flags reading their help, default and bounds from the field.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import typer
import yaml
from pydantic import BaseModel, Field
from typer.testing import CliRunner

from aletheia.cli import app
from pipeline.common.config_options import option_for
from pipeline.config_docs import (
    NAMES,
    REFERENCE,
    REGENERATE,
    json_schema,
    reachable_models,
    render_reference,
    top_level,
)

REPO = Path(__file__).resolve().parents[1]

# Models (by class name) or single fields ("Model.field") whose descriptions are not written
# yet (steps D2-D5 of the redesign). A name leaves this set once all its fields are described, and
# the test below fails while a described model is still listed.
PENDING: set[str] = set()


def _all_models() -> dict[str, type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    for top in top_level().values():
        for model in reachable_models(top):
            other = found.setdefault(model.__name__, model)
            assert other is model, f"two config models named {model.__name__}: PENDING is ambiguous"
    return found


def _undescribed(model: type[BaseModel]) -> list[str]:
    return [
        name
        for name, info in model.model_fields.items()
        if not (info.description and info.description.strip())
        and f"{model.__name__}.{name}" not in PENDING
    ]


def test_every_config_field_is_described() -> None:
    """Over the six top-level configs and every model they reach: a model not in PENDING has
    a description on each field (bar single fields listed as `Model.field`)."""
    missing = {
        name: fields
        for name, model in _all_models().items()
        if name not in PENDING and (fields := _undescribed(model))
    }
    assert not missing, (
        "config fields without Field(description=...) (describe them, moving the trailing "
        f"comment into the description): {missing}"
    )


def test_pending_lists_only_undescribed_models() -> None:
    """PENDING shrinks as descriptions land: a listed name must exist and still lack one."""
    models = _all_models()
    stale = []
    for entry in sorted(PENDING):
        name, _, field = entry.partition(".")
        assert name in models, f"PENDING names {entry!r}, which no top-level config reaches"
        model = models[name]
        if field:
            assert field in model.model_fields, f"PENDING names {entry!r}: no such field"
            if model.model_fields[field].description:
                stale.append(entry)
        elif all(info.description for info in model.model_fields.values()):
            stale.append(entry)
    assert not stale, f"described now, remove from PENDING: {stale}"


def test_descriptions_leave_the_demo_build_id_and_dump_alone() -> None:
    """Descriptions are documentation only: the demo's run config dumps (the card embeds the
    dump) and hashes (the build id) to values that hold no description text."""
    from pipeline.config import load_run_config

    cfg = load_run_config(REPO / "configs" / "demo.yaml")
    dump = json.dumps(cfg.model_dump(mode="json"), sort_keys=True)
    for model in reachable_models(type(cfg)):
        for info in model.model_fields.values():
            if info.description and len(info.description) > 30:
                assert info.description not in dump


# ------------------------------------------------------------------- reference page


def test_reference_matches_the_models() -> None:
    """docs/config-reference.md is what the models render now."""
    page = REPO / REFERENCE
    want = render_reference(top_level())
    assert page.is_file(), f"{REFERENCE} is missing: run `{REGENERATE}`"
    assert page.read_text(encoding="utf-8") == want, (
        f"{REFERENCE} is out of date with the config models: run `{REGENERATE}`"
    )


def test_reference_lists_every_field_by_its_dotted_path() -> None:
    page = render_reference(top_level())
    assert render_reference(top_level()) == page  # deterministic
    for key in NAMES:
        assert f"## `{key}`: " in page
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    paths = {line.split("`")[1] for line in rows}
    assert {"seed", "judge.chunk_size", "runner.sample_placement.num_gpus"} <= paths
    assert "sample.sources[ModelSource].backend(VLLMOptions).tensor_parallel_size" in paths
    (row,) = [line for line in rows if line.startswith("| `judge.chunk_size` |")]
    assert "`int` | `256` |" in row


def test_reference_shows_each_sections_own_defaults() -> None:
    """The run config's `mixed:` and `adv:` are one model (AdversarialConfig) with two sets of
    defaults: the page shows Mixed's 25% share over the whole catalogue for `mixed.*` and
    Adv's six types on every row for `adv.*`, each read from the run config's own default
    section; a value a validator derives alike in a bare section keeps the class default."""
    from pipeline.config import RunConfig
    from pipeline.instances.adversarial.catalogue import ALETHEIA_ADV

    page = render_reference(top_level())
    defaults = {
        line.split("`")[1]: line.split(" | ")[2].strip("`")
        for line in page.splitlines()
        if line.startswith("| `")
    }
    run = RunConfig.model_fields
    mixed, adv = run["mixed"].default_factory(), run["adv"].default_factory()  # type: ignore[misc]
    assert (mixed.share, mixed.bias_types, mixed.copy_per_bias) == (0.25, None, False)
    assert defaults["mixed.share"] == "0.25" and defaults["adv.share"] == "1.0"
    assert defaults["mixed.split"] == '"mixed"' and defaults["adv.split"] == '"adv"'
    assert defaults["mixed.bias_types"] == "null"
    assert defaults["adv.bias_types"] == json.dumps(list(ALETHEIA_ADV))
    assert defaults["mixed.copy_per_bias"] == "false" and defaults["adv.copy_per_bias"] == "true"
    assert defaults["mixed.judge.progress"] == "false" == str(adv.judge.progress).lower()
    assert defaults["runner.dpo_shards"] == "null"  # None = as many as sample_shards


# ---------------------------------------------------------------------------- schema


def _shipped() -> list[tuple[str, Path, type[BaseModel], bool]]:
    """(id, file, model, whole) for every config YAML in configs/ that a model reads.
    Zoo cells (configs/train/zoo) hold a partial TrainConfig under `config:` (the cell adds
    `model` and `output_dir`), so their required keys are not checked."""
    from pipeline.instances.adversarial.config import AdversarialConfig
    from pipeline.instances.config import AssembleConfig
    from pipeline.instances.dpo.config import DPOConfig
    from pipeline.sampling.config import SampleConfig

    tops = top_level()
    by_folder: dict[str, type[BaseModel]] = {
        "configs": tops["run"],
        "configs/train": tops["train"],
        "configs/train/zoo": tops["train"],
        "configs/rlvr": tops["rlvr-study"],
        "configs/ablation": tops["ablation"],
        "configs/pools": SampleConfig,
    }
    by_stem = {"adversarial": AdversarialConfig, "assemble": AssembleConfig, "dpo": DPOConfig}
    out = []
    for path in sorted((REPO / "configs").rglob("*.yaml")):
        folder = path.parent.relative_to(REPO).as_posix()
        if folder == "configs/accelerate":
            continue  # accelerate's own launcher files
        if folder == "configs/instances":
            model = by_stem[path.stem.split("_")[0]]
        else:
            model = by_folder[folder]
        out.append((path.relative_to(REPO).as_posix(), path, model, folder != "configs/train/zoo"))
    return out


SHIPPED = _shipped()


@pytest.mark.parametrize(
    ("path", "model", "whole"), [s[1:] for s in SHIPPED], ids=[s[0] for s in SHIPPED]
)
def test_schema_accepts_every_shipped_config(
    path: Path, model: type[BaseModel], whole: bool
) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    schema = json_schema(model)
    if not whole:
        data = data["config"]
        schema = {k: v for k, v in schema.items() if k != "required"}
    errors = [
        f"{'.'.join(map(str, e.absolute_path)) or '<top>'}: {e.message}"
        for e in jsonschema.Draft202012Validator(schema).iter_errors(data)
    ]
    assert not errors, errors


def test_schema_refuses_a_typo() -> None:
    validator = jsonschema.Draft202012Validator(json_schema(top_level()["run"]))
    assert validator.is_valid({"judge": {"chunk_size": 1}})
    errors = list(validator.iter_errors({"judge": {"chunk_siz": 1}}))
    assert errors, "a misspelt key passed the run schema"
    assert "chunk_siz" in errors[0].message and list(errors[0].absolute_path) == ["judge"]
    assert not validator.is_valid({"judge": {"chunk_size": 0}})  # ge=1


def test_schema_declares_the_shorthands_the_validators_accept() -> None:
    """`sample: <pool file>` (or a list of them) and a judge model's `backend: transformers`
    / `model_path:` are accepted by the models, so by the schema too."""
    run = jsonschema.Draft202012Validator(json_schema(top_level()["run"]))
    assert run.is_valid({"sample": "configs/pools/demo-tiny.yaml"})
    assert run.is_valid({"sample": ["configs/pools/demo-tiny.yaml"]})
    assert not run.is_valid({"sample": 3})
    judge = {"name": "v", "model_path": "/m", "backend": "transformers"}
    assert run.is_valid({"dpo": {"judges": [judge]}})
    from pipeline.instances.dpo.config import JudgeModelSpec

    assert JudgeModelSpec.model_validate(judge).model == "/m"  # what the schema allows is valid


# -------------------------------------------------------------------------- commands


def test_config_schema_command_prints_each_schema() -> None:
    for name in NAMES:
        result = CliRunner().invoke(app, ["config", "schema", name])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output) == json.loads(
            json.dumps(json_schema(top_level()[name]), sort_keys=True)
        )


def test_config_reference_command_writes_and_checks(tmp_path: Path) -> None:
    page = tmp_path / "ref.md"
    result = CliRunner().invoke(app, ["config", "reference", "--check", "--out", str(page)])
    assert result.exit_code != 0 and "missing" in str(result.exception)
    result = CliRunner().invoke(app, ["config", "reference", "--out", str(page)])
    assert result.exit_code == 0, result.output
    assert page.read_text() == render_reference(top_level())
    result = CliRunner().invoke(app, ["config", "reference", "--check", "--out", str(page)])
    assert result.exit_code == 0, result.output
    page.write_text(page.read_text() + "edited\n")
    result = CliRunner().invoke(app, ["config", "reference", "--check", "--out", str(page)])
    assert result.exit_code != 0 and REGENERATE in str(result.exception)


# -------------------------------------------------------------------------- option_for


class _Knobs(BaseModel):
    size: int = Field(256, ge=1, le=4096, description="items per batch")
    scale: float = Field(1.0, gt=0, description="multiply every limit")
    tags: list[str] = Field(default_factory=lambda: ["a"], description="labels")
    path: str = Field(description="where to write")


def test_option_for_takes_help_default_and_bounds_from_the_field() -> None:
    cli = typer.Typer()

    @cli.command()
    def run(
        size: int = option_for(_Knobs, "size"),
        scale: float = option_for(_Knobs, "scale", "--scale", "-x", help="narrower help"),
        path: str = option_for(_Knobs, "path"),
    ) -> None:
        typer.echo(f"{size} {scale} {path}")

    runner = CliRunner()
    assert runner.invoke(cli, ["--path", "p"]).output.strip() == "256 1.0 p"
    assert runner.invoke(cli, ["--path", "p", "-x", "2", "--size", "4"]).output.strip() == "4 2.0 p"
    assert runner.invoke(cli, ["--path", "p", "--size", "0"]).exit_code != 0  # ge=1
    assert runner.invoke(cli, ["--path", "p", "--size", "5000"]).exit_code != 0  # le=4096
    assert runner.invoke(cli, []).exit_code != 0  # a required field is a required flag
    page = runner.invoke(cli, ["--help"], terminal_width=200).output
    assert "items per batch" in page and "narrower help" in page
    assert "multiply every limit" not in page
    assert option_for(_Knobs, "tags").default == ["a"]
    with pytest.raises(KeyError, match="no field 'siz'"):
        option_for(_Knobs, "siz")


# Flags built by option_for: (command path, parameter, model, field). A generated stage
# command names each parameter after its field (`--max-tests` is `max_tests_per_problem`).
OPTION_FOR_FLAGS = [
    (("judge",), "chunk_size", "JudgeConfig", "chunk_size"),
    (("judge",), "time_limit_scale", "JudgeConfig", "time_limit_scale"),
    (("judge",), "pool_size", "SandboxSection", "pool_size"),
    (("problems", "ingest"), "max_tests_per_problem", "IngestConfig", "max_tests_per_problem"),
    (
        ("problems", "ingest"),
        "max_solutions_per_language",
        "IngestConfig",
        "max_solutions_per_language",
    ),
    (("problems", "ingest"), "limit_per_source", "IngestConfig", "limit_per_source"),
]


@pytest.mark.parametrize("command", sorted({c for c, *_ in OPTION_FOR_FLAGS}), ids=" ".join)
def test_help_shows_field_descriptions(
    command: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flag that restates a config field shows the field's description on an 80-column
    help page, and its default is the field's."""
    import typer.rich_utils
    from typer import _click as click

    from aletheia.cli import load_command
    from pipeline.common.config_options import field_default

    monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", 80)
    result = CliRunner().invoke(app, [*command, "--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    words = " ".join(result.output.replace("│", " ").split())
    cmd = load_command(command[0])
    for name in command[1:]:  # a subcommand of a group
        assert hasattr(cmd, "get_command"), cmd
        cmd = cmd.get_command(click.Context(cmd), name)
    assert cmd is not None
    params = {p.name: p for p in cmd.params}
    models = _all_models()
    for path, param_name, model_name, field in OPTION_FOR_FLAGS:
        if path != command:
            continue
        model = models[model_name]
        description = model.model_fields[field].description
        assert description, f"{model_name}.{field} has no description"
        param = params[param_name]
        assert getattr(param, "help", None) == description
        assert param.default == field_default(model, field)
        # The description on the page, its words in order: the help column wraps them, and a
        # wrapped type column (`<int range>` / `[x>=1]`) may sit between two of them.
        assert _in_order(description.split(), words.split()), (
            f"{description!r} not on:\n{result.output}"
        )


def _in_order(wanted: list[str], page: list[str]) -> bool:
    rest = iter(page)
    return all(any(word == seen for seen in rest) for word in wanted)
