"""`aletheia publish` on an existing build honours the `publish:` section of the run config
the build was made with (kept in build.json)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from aletheia.cli import app


def test_publish_uses_the_builds_publish_section(build_dir: Path, tmp_path: Path) -> None:
    build = tmp_path / "build"
    shutil.copytree(build_dir, build)
    manifest = json.loads((build / "build.json").read_text())
    manifest["run_config"]["publish"] = {"pretty_name": "Regen Test Set", "license": "cc-by-4.0"}
    (build / "build.json").write_text(json.dumps(manifest))

    hub = tmp_path / "hub"
    r = CliRunner().invoke(app, ["publish", "--build", str(build), "--hub-dir", str(hub)])
    assert r.exit_code == 0, r.output
    card = (hub / "README.md").read_text()
    assert "Regen Test Set" in card and "license: cc-by-4.0" in card
