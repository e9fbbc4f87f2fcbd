"""The graph is closed: a build made node by node with `aletheia stage NODE` (every node, in
the graph's order: the manifest, publish and the rest included) publishes a folder byte for
byte the flow's (build-aletheia-train on a real ephemeral Prefect server and the Docker
sandbox).

The two builds run in two folders, each from its own working directory with the same run
config, every path in it relative (as scripts/repro_check.py does): the release holds the
whole run config, so the same strings must go in. The evaluation after publish is left out
(it changes no published byte and is the slowest node); `push` runs for neither (no
`hub.push`)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.flows.flows_helpers import REPO, SMALL_PROBLEMS, small_config

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _files(root: Path) -> dict[str, str]:
    """Every file under `root` (hidden ones too: a marker left in the folder would ship)
    and its sha256."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _root(parent: Path, name: str) -> Path:
    """A build's working directory, with its own copy of the four problems."""
    root = parent / name
    for problem in SMALL_PROBLEMS:
        shutil.copytree(REPO / "data" / "bundled" / problem, root / "problems" / problem)
    cfg = small_config(Path("out"), Path("problems"), Path("models/tiny"), evaluate=None)
    (root / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=True))
    return root


def _stage(node: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any] | None:
    """`aletheia stage NODE -c config.yaml` in this process; what it printed last."""
    from aletheia.cli import main

    with pytest.raises(SystemExit) as e:
        main(["stage", node, "-c", "config.yaml"])
    said = capsys.readouterr()
    assert not e.value.code, f"aletheia stage {node}: {said.out[-2000:]}{said.err[-3000:]}"
    lines = said.out.splitlines()
    if "{" not in lines:
        return None  # the config leaves the node out
    start = len(lines) - 1 - lines[::-1].index("{")  # the last JSON object printed
    return json.loads("\n".join(lines[start:]))


def test_a_build_node_by_node_publishes_the_flows_bytes(
    prefect_api: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from flows.build import build_aletheia_train
    from pipeline import stages

    flow_root = _root(tmp_path, "flow")
    monkeypatch.chdir(flow_root)
    results = build_aletheia_train("config.yaml")
    assert results["evaluate"] is None and results["push"] is None  # left out by the config
    flow_hub = _files(flow_root / "out" / "hub")
    capsys.readouterr()

    inline_root = _root(tmp_path, "inline")
    monkeypatch.chdir(inline_root)
    said = {node.name: _stage(node.name, capsys) for node in stages.GRAPH}
    assert said["publish"] is not None and not said["publish"]["cached"]
    assert said["evaluate"] is None and said["push"] is None
    # the manifest is a node like any other: both builds wrote the same one
    manifest = "out/work/build.json"
    assert (inline_root / manifest).read_bytes() == (flow_root / manifest).read_bytes()

    inline_hub = _files(inline_root / "out" / "hub")
    assert "README.md" in flow_hub and any(f.startswith("heldout/test-") for f in flow_hub)
    assert sorted(inline_hub) == sorted(flow_hub)
    differ = [f for f in flow_hub if inline_hub[f] != flow_hub[f]]
    assert not differ, differ
    # and a node run again is reused: its marker, which both executors write, matched
    assert _stage("publish", capsys) == {**said["publish"], "cached": True}
