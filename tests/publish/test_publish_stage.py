"""PUBLISH as a `Stage` value run by the runner: its declared outputs are what it wrote, the
Hub folder holds only published files (the marker stays beside it), the load target keys
it, and a publish killed mid-way (SIGKILL in a child process, so nothing after the kill
point runs) leaves the previous folder byte for byte as it was."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from pipeline.common.runner import marker_dir, run_stage
from pipeline.common.stage import MARKER
from pipeline.publish.config import PublishConfig
from pipeline.publish.layout import list_files
from pipeline.publish.stage import PUBLISH, PublishCall, build_hub_folder, publish_inputs

REPO = Path(__file__).resolve().parents[2]


def _bytes(folder: Path) -> dict[str, bytes]:
    return {f: (folder / f).read_bytes() for f in list_files(folder)}


def test_publish_outputs_match_what_it_wrote(build_dir: Path, tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    call = PublishCall()
    result = run_stage(PUBLISH, call, publish_inputs(build_dir), hub)
    declared = PUBLISH.outputs(call, hub)
    assert result.outputs == {name: str(path) for name, path in declared.items()}
    assert declared["hub"].is_dir() and declared["card"].is_file()
    written = list_files(hub)
    assert result.stats["files"] == len(written)
    parquet = [f for f in written if f.endswith(".parquet")]
    assert sum(result.stats["shards"].values()) == len(parquet)
    assert "README.md" in written and MARKER not in {Path(f).name for f in written}
    # The card names the folder it landed in, not the temp sibling it was built in.
    card = declared["card"].read_text()
    assert f'load_dataset("{hub}", "train")' in card and ".building" not in card
    marker = json.loads((marker_dir(hub, beside=True) / MARKER).read_text())
    assert marker["stage"] == "publish" and marker["stats"] == result.stats
    assert sorted(p.name for p in tmp_path.iterdir()) == [".hub.stage", "hub", "work"]


def test_the_load_target_keys_the_stage(build_dir: Path, tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    assert not build_hub_folder(build_dir, hub)["cached"]
    assert build_hub_folder(build_dir, hub)["cached"]
    # Another repo id: another card, so the folder is built again (the rows stay the same).
    assert not build_hub_folder(build_dir, hub, repo_id="org/x")["cached"]
    assert 'load_dataset("org/x", "train")' in (hub / "README.md").read_text()
    assert build_hub_folder(build_dir, hub, repo_id="org/x")["cached"]


def _kill_mid_publish(build_dir: Path, hub: Path) -> subprocess.CompletedProcess[str]:
    """Publish with another shard size in a fresh interpreter that kills itself once the
    shards are written (where the plots would be drawn)."""
    code = (
        "import os, signal, sys\n"
        "import pipeline.publish.plots as plots\n"
        "plots.write_plots = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)\n"
        "from pipeline.publish.stage import PublishConfig, build_hub_folder\n"
        "build_hub_folder(sys.argv[1], sys.argv[2], PublishConfig(max_shard_bytes=4_000))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(build_dir), str(hub)],
        check=False,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_crash_mid_publish_leaves_the_previous_folder(build_dir: Path, tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    build_hub_folder(build_dir, hub)
    before = _bytes(hub)
    marker = (marker_dir(hub, beside=True) / MARKER).read_bytes()

    child = _kill_mid_publish(build_dir, hub)
    assert child.returncode == -signal.SIGKILL, child.stderr
    building = tmp_path / ".hub.building"
    assert list(building.rglob("*.parquet")), "the kill came after the new shards were written"
    assert _bytes(hub) == before  # readers still see the previous folder, whole
    assert (marker_dir(hub, beside=True) / MARKER).read_bytes() == marker

    # The previous folder is still what its marker vouches for; the half-built one goes.
    assert build_hub_folder(build_dir, hub)["cached"]
    assert _bytes(hub) == before and not building.exists()
    rebuilt = build_hub_folder(build_dir, hub, PublishConfig(max_shard_bytes=4_000))
    assert not rebuilt["cached"] and len(list((hub / "train").glob("*.parquet"))) > 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [".hub.stage", "hub", "work"]
