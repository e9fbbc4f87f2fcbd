"""`aletheia stage NODE --dry-run` is about the node: the state of each node it reads (not
OK while one has not finished, naming the one to run first), where it writes, its own checks
and plan line; not the whole build's plan with `~0` estimates. The nodes have one naming
style, `stage --help` lists them, and a run names only the outputs it wrote."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from pipeline import stages
from pipeline.common.graph import Node, out
from pipeline.common.stage import ShardContext, Stats
from pipeline.config import load_run_config
from pipeline.node_names import NODES
from tests.flows.toy_stage import TOY, ToyCall

REPO = Path(__file__).resolve().parents[1]


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    from aletheia.cli import main

    with pytest.raises(SystemExit) as e:
        main(list(args))
    said = capsys.readouterr()
    return int(e.value.code or 0), said.out + said.err


def _rejects(ctx: ShardContext[ToyCall]) -> Stats:
    """The toy count, plus a rejects table written only when a row is rejected (none are)."""
    n = pq.ParquetFile(ctx.inputs["problems"]).metadata.num_rows
    ctx.out.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"problems": [n]}), ctx.out / "count.parquet")
    return {"problems": n}


TOY_REJECTS = dataclasses.replace(
    TOY,
    name="toy-rejects",
    run=_rejects,
    outputs=lambda call, where: {
        "count": where / "count.parquet",
        "rejects": where / "rejects.parquet",
    },
    optional_outputs=frozenset({"rejects"}),
)


@pytest.fixture
def graph(monkeypatch: pytest.MonkeyPatch) -> None:
    node = Node(
        "toy-rejects",
        TOY_REJECTS,
        lambda c: [ToyCall()],
        lambda c, _: c.work_dir / "toy",
        {"problems": out("ingest", "problems")},
    )
    monkeypatch.setattr(stages, "GRAPH", stages.GRAPH.with_node(node))


@pytest.fixture
def config(tmp_path: Path) -> Path:
    raw = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())
    raw["out_dir"] = str(tmp_path / "out")
    raw["ingest"] = {**(raw.get("ingest") or {}), "limit_per_source": 4}
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_a_nodes_dry_run_is_about_the_node(
    graph: None, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = load_run_config(config).work_dir
    rc, said = _cli(capsys, "stage", "assemble", "--dry-run", "-c", str(config))
    # a node run before its inputs is the user's mistake: exit 2 (pipeline/errors.py ExitCode)
    assert rc == 2 and said.rstrip().endswith("preflight: FAILED (fix the problems above)")
    lines = said.splitlines()
    assert lines[0].startswith("node assemble of demo (build ")
    assert "  reads  judge (judged): NOT finished" in lines
    assert "  reads  tiny-model (runs first): NOT finished" in lines
    assert f"  writes {work}/instances/train.parquet" in lines
    assert "  plan   train, heldout, strong, hard" in lines
    [problem] = [x for x in lines if x.startswith("problem: ")]
    assert problem == (
        "problem: [inputs] judge and ingest and splits and tiny-model have not finished: run "
        "`aletheia stage ingest` first (the first unfinished node upstream), or the build"
    )
    assert not [x for x in lines if "~" in x or x.startswith("  stage ")]  # no build plan
    # Not a dry run: refused in the same words, before anything runs.
    rc, said = _cli(capsys, "stage", "toy-rejects", "-c", str(config))
    assert rc == 2 and "ingest has not finished: run `aletheia stage ingest` first" in said

    rc, said = _cli(capsys, "stage", "ingest", "-c", str(config))
    assert rc == 0, said
    rc, said = _cli(capsys, "stage", "toy-rejects", "--dry-run", "-c", str(config))
    assert rc == 0 and said.rstrip().endswith("preflight: OK"), said
    assert "  reads  ingest (problems): finished" in said
    assert f"  writes {work}/toy/rejects.parquet (only when it has rows)" in said
    assert "  state  not finished: a run makes it" in said
    rc, said = _cli(capsys, "stage", "toy-rejects", "-c", str(config))
    assert rc == 0 and list(json.loads(said)["outputs"]) == ["count"], said  # no rejects
    rc, said = _cli(capsys, "stage", "toy-rejects", "--dry-run", "-c", str(config))
    assert "  state  finished before: a run reuses it" in said


def test_one_naming_style_listed_by_stage_help(capsys: pytest.CaptureFixture[str]) -> None:
    """Every node name is lower-case words joined by `-` (`mixed_dpo-responses` mixed `_` and
    `-`), the light list `stage --help` shows is the graph's, and the renamed Mixed-DPO nodes
    still write the `mixed_dpo` folder: markers, caches and published bytes are unchanged."""
    assert NODES == tuple(n.name for n in stages.GRAPH)
    assert all(re.fullmatch(r"[a-z]+(-[a-z]+)*", n) for n in NODES), NODES
    rc, said = _cli(capsys, "stage", "--help")
    assert rc == 0 and all(n in " ".join(said.split()) for n in NODES), said
    cfg = load_run_config(REPO / "configs" / "demo.yaml")
    for name, folder in (("mixed-dpo", "mixed_dpo"), ("mixed-dpo-responses", "mixed_dpo")):
        node = stages.GRAPH[name]
        [call] = node.calls(cfg)
        assert call.name == "mixed_dpo"  # the table's name, written into its rows
        assert node.out(cfg, call).is_relative_to(cfg.work_dir / folder)
    rc, said = _cli(capsys, "stage", "mixed_dpo", "--dry-run")
    assert rc == 2 and "did you mean 'mixed-dpo'?" in said
