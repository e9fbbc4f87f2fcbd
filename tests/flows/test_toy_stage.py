"""Adding a stage is one file (tests/flows/toy_stage.py) plus one line in the graph: preflight
and the dry run check and plan it, `aletheia stage` runs it inline once its upstream has
finished, and the Prefect executor the build flows use runs it (a real ephemeral server),
as a Cached task run when its marker already matches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from pipeline import stages
from tests.flows.flows_helpers import small_config
from tests.flows.toy_stage import count, with_toy


@pytest.fixture
def toy_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stages, "GRAPH", with_toy(stages.GRAPH))


@pytest.fixture
def cfg_file(tmp_path: Path, small_bundled: Path) -> Path:
    cfg = small_config(tmp_path / "out", small_bundled, tmp_path / "tiny-model")
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    from aletheia.cli import main

    with pytest.raises(SystemExit) as e:
        main(list(args))
    said = capsys.readouterr()
    return int(e.value.code or 0), said.out + said.err


def test_preflight_and_dry_run_plan_the_toy_stage(
    toy_graph: None, cfg_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.config import resolve_run_config
    from pipeline.preflight import preflight

    report = preflight(resolve_run_config(cfg_file), docker=False)
    assert "toy-count: count the train problems" in report.stages()
    assert any(f.message == "toy stage checked (train problems)" for f in report.findings)
    _, said = _cli(capsys, "build-train", "--dry-run", "-c", str(cfg_file))
    assert "  stage  toy-count: count the train problems" in said, said


def test_aletheia_stage_runs_the_toy_node_after_its_upstream(
    toy_graph: None, cfg_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.config import resolve_run_config

    work = resolve_run_config(cfg_file).work_dir
    rc, said = _cli(capsys, "stage", "toy-count", "-c", str(cfg_file))
    # Its input has not finished: one line naming the node to run first (ingest, the first
    # unfinished node upstream of splits), before anything runs.
    assert rc == 2 and "splits has not finished: run `aletheia stage ingest` first" in said, said
    for node in ("ingest", "splits"):
        rc, said = _cli(capsys, "stage", node, "-c", str(cfg_file))
        assert rc == 0, said
    rc, said = _cli(capsys, "stage", "toy-count", "-c", str(cfg_file))
    assert rc == 0, said
    train = pq.ParquetFile(work / "splits" / "train.parquet").metadata.num_rows
    assert count(work) == {"train problems": train} and train > 0
    assert '"cached": false' in said
    rc, said = _cli(capsys, "stage", "toy-count", "-c", str(cfg_file))
    assert rc == 0 and '"cached": true' in said, said  # the marker decides: nothing ran


def test_the_flow_executor_runs_the_toy_node(
    toy_graph: None, cfg_file: Path, prefect_api: str
) -> None:
    from prefect import flow

    from flows.build import walk
    from pipeline.config import resolve_run_config

    cfg = resolve_run_config(cfg_file)
    nodes = [stages.GRAPH[n] for n in ("ingest", "splits", "toy-count")]

    @flow(name="toy-build")
    def toy_build() -> dict[str, Any]:
        return walk(nodes, cfg)[0]

    first, second = toy_build(), toy_build()
    assert first["toy-count"]["stats"] == {"problems": count(cfg.work_dir)["train problems"]}
    assert not first["toy-count"]["cached"] and second["toy-count"]["cached"]
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import TaskRunFilter, TaskRunFilterName

    # By name: the session's server holds every other flow test's task runs too.
    only_toy = TaskRunFilter(name=TaskRunFilterName(like_="toy-count"))
    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(task_run_filter=only_toy, limit=50)
    states = sorted(r.state_name for r in runs if r.name.startswith("toy-count"))
    assert states == ["Cached", "Completed"], states  # the second run: the marker matched
    assert json.loads((cfg.work_dir / "toy" / "_stage.json").read_text())["stage"] == "toy-count"
