"""Where config models live : every section of the six user-facing configs in a
config module (`<package>/config.py`, or `*_config.py` beside a second config of the same
package), imported from there and nowhere else, and config modules light enough that building
a command's --help never loads a model library."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel

from pipeline.config_docs import reachable_models, top_level

REPO = Path(__file__).resolve().parents[1]

# What a config module may import at module level besides the standard library, pydantic,
# YAML, `schemas`, `pipeline.errors` and other config modules: small helpers that define the
# values a field's type or default names, none of which imports anything heavy.
LIGHT_HELPERS = {
    "pipeline.common.answers": "AnswerFormat, the answer styles",
    "pipeline.common.verifier_prompt": "PromptSpec / PromptStyle, the prompt knobs",
    "pipeline.instances.adversarial.catalogue": "the bias types a config may name",
    "pipeline.train.rewards": "Aletheia's overlong-buffer default",
    "pipeline.train.trl_fields": "TRL's config fields, read from its source without importing it",
}
# Libraries whose import takes seconds; no config module may load them (even indirectly).
HEAVY = (
    "torch",
    "transformers",
    "trl",
    "datasets",
    "polars",
    "prefect",
    "ray",
    "typer",
    "matplotlib",
    "huggingface_hub",
    "docker",
    "datasketch",
    "scipy",
    "sandbox",
)


def _is_config_module(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last == "config" or last.endswith("_config")


def _config_modules() -> list[str]:
    """Every config module in pipeline/ but the run-level composition (pipeline/config.py,
    which also hashes the build id)."""
    out = []
    for path in sorted((REPO / "pipeline").rglob("*.py")):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts)
        if _is_config_module(name) and name != "pipeline.config":
            out.append(name)
    return out


def _sections() -> dict[type[BaseModel], str]:
    """Every model reachable from a user-facing config -> the config that reaches it."""
    found: dict[type[BaseModel], str] = {}
    for top_name, top in top_level().items():
        for model in reachable_models(top):
            found.setdefault(model, top_name)
    return found


def test_every_section_lives_in_a_config_module() -> None:
    sections = _sections()
    assert len(sections) > 40, "the walk found too few models to mean anything"
    misplaced = [
        f"{m.__module__}.{m.__qualname__} (reached from the {top} config)"
        for m, top in sections.items()
        if not _is_config_module(m.__module__)
    ]
    assert not misplaced, (
        "config sections outside a config module (move each to its package's config.py): "
        + ", ".join(misplaced)
    )


def _python_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "*.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [REPO / f for f in listed if (REPO / f).is_file()]


def test_config_classes_are_imported_from_their_home() -> None:
    """No module imports a section from a module that merely imports it too (a re-export
    left behind by a move). The one other path is the package's own facade
    (`from pipeline.evaluate import EvalConfig`: the lazy names of its __init__)."""
    homes = {m.__name__: m.__module__ for m in _sections()}
    wrong = []
    for path in _python_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.module or node.level:
                continue
            if not node.module.startswith("pipeline"):
                continue
            for alias in node.names:
                home = homes.get(alias.name)
                if home is not None and node.module not in (home, home.rsplit(".", 1)[0]):
                    rel = path.relative_to(REPO)
                    wrong.append(f"{rel}:{node.lineno} imports {alias.name} from {node.module}")
    assert not wrong, "import each from its home module: " + "; ".join(wrong)


def _module_level_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, module) of each import a module runs when imported (TYPE_CHECKING blocks and
    imports inside functions run later, if ever)."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.lineno, node.module))
    return out


def _allowed(module: str) -> bool:
    root = module.split(".")[0]
    return (
        root in sys.stdlib_module_names
        or root in {"pydantic", "pydantic_core", "annotated_types", "yaml", "schemas"}
        or module == "pipeline.errors"
        or _is_config_module(module)
        or module in LIGHT_HELPERS
    )


def test_config_modules_import_only_config_and_light_modules() -> None:
    modules = _config_modules()
    assert "pipeline.judge.config" in modules and "pipeline.common.config" in modules
    wrong = []
    for name in modules:
        path = REPO / (name.replace(".", "/") + ".py")
        for line, imported in _module_level_imports(ast.parse(path.read_text())):
            if not _allowed(imported):
                wrong.append(f"{path.relative_to(REPO)}:{line} imports {imported}")
    assert not wrong, (
        "a config module imports only pydantic, yaml, schemas, pipeline.errors, config "
        "modules and LIGHT_HELPERS (import the rest inside the function that needs it): "
        + "; ".join(wrong)
    )


def test_importing_every_config_loads_no_heavy_library() -> None:
    """Measured in a fresh interpreter, the run-level config included: what a command's
    --help pays for its config's flags."""
    modules = [*_config_modules(), "pipeline.config"]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(' '.join(h for h in {HEAVY!r} if h in sys.modules))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == [], f"importing the config modules loaded {r.stdout.strip()}"


def test_config_engine_names_are_the_sandboxs() -> None:
    """The run config spells the engine names itself (so loading it never loads the sandbox
    package); they must be the ones `open_engine` knows, in the same order."""
    from typing import get_args

    from pipeline.judge.config import EngineName
    from sandbox.engines import ENGINES

    assert get_args(EngineName) == ENGINES
