"""The layer contract (pyproject.toml [tool.importlinter], docs/architecture.md): no module imports
one from a layer above it, and the app shell's lazy loaders are imports a linter can see.

`lint-imports` (import-linter, in the `dev` extra) runs in a fresh process on this checkout,
with the checkout first on the path so it reads these files and not an installed copy.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
STEP = re.compile(r"\b(?:A[1-5]|B[1-8]|C[1-3]|D[1-6]|E1)\b")  # the redesign's step names


def _contract() -> dict:
    (contract,) = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
    return contract


def _lint(*args: str) -> subprocess.CompletedProcess[str]:
    assert LINT_IMPORTS.exists(), (
        f"{LINT_IMPORTS} is missing: pip install 'import-linter==2.16' (the dev extra)"
    )
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", *args],
        check=False,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_layer_contract_is_kept() -> None:
    """Also fails when an ignored import no longer exists (import-linter's default), so the
    ignore list shrinks as the steps that remove those edges land."""
    r = _lint()
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "1 kept, 0 broken" in r.stdout, r.stdout[-2000:]


def test_every_ignored_import_names_the_step_that_removes_it() -> None:
    """Each `ignore_imports` entry sits under a comment naming a redesign step (A1..E1)."""
    text = (REPO / "pyproject.toml").read_text()
    block = text[text.index("ignore_imports = [") :]
    block = block[: block.index("\n]")]
    comment, after_entry, unnamed = "", False, []
    for line in block.splitlines()[1:]:
        line = line.strip()
        if line.startswith("#"):  # a comment after an entry starts the next group's
            comment = line if after_entry else f"{comment} {line}"
            after_entry = False
        elif line.startswith('"'):
            after_entry = True
            if not STEP.search(comment):
                unnamed.append(line)
    assert len(_contract()["ignore_imports"]) == block.count('\n  "')
    assert not unnamed, f"ignored imports without the step that removes them: {unnamed}"


def test_an_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    """The same contract with `pipeline.judge` put above `pipeline.sampling` is broken, and
    the report names the edge: the linter reads the real imports, the sampler's included."""
    contract = _contract()
    layers = list(contract["layers"])
    i, j = layers.index("pipeline.sampling"), layers.index("pipeline.judge")
    layers[i], layers[j] = layers[j], layers[i]
    roots = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"][
        "root_packages"
    ]
    ini = tmp_path / "swapped.ini"
    ini.write_text(
        "[importlinter]\nroot_packages =\n"
        + "".join(f"    {r}\n" for r in roots)
        + "\n[importlinter:contract:layers]\nname = swapped\ntype = layers\nlayers =\n"
        + "".join(f"    {layer}\n" for layer in layers)
        + "ignore_imports =\n"
        + "".join(f"    {imp}\n" for imp in contract.get("ignore_imports", []))
    )
    r = _lint("--config", str(ini))
    assert r.returncode != 0, r.stdout[-2000:]
    assert "pipeline.sampling is not allowed to import pipeline.judge" in r.stdout, r.stdout[-3000:]


def test_the_shell_imports_every_command_module_statically() -> None:
    """`aletheia/cli.py` names each command module in an import statement (inside a loader
    function, so `--help` stays lazy), never a string for importlib: the linter's graph of
    the shell holds every `cli` module that registers a command."""
    import grimp

    from aletheia.cli import COMMANDS

    graph = grimp.build_graph("aletheia", "pipeline", "flows", "schemas", "sandbox")
    imported = graph.find_modules_directly_imported_by("aletheia.cli")
    cli_modules = {
        m
        for m in graph.modules
        if m.endswith(".cli") and m.startswith(("pipeline.", "flows.")) and m != "aletheia.cli"
    }
    assert cli_modules, "no command modules found"
    assert cli_modules <= imported, f"not imported by the shell: {cli_modules - imported}"
    assert "importlib" not in (REPO / "aletheia" / "cli.py").read_text()
    loaders = {entry.register.__name__ for entry in COMMANDS.values()}
    assert all(name.startswith("_") for name in loaders), loaders  # functions, not strings
