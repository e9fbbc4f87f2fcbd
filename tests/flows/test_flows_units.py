"""RunConfig, shard helpers, retry classification and prefect.yaml: no server, no Docker."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from flows.task import is_transient
from pipeline.common.parquet import write_parquet
from pipeline.common.sharding import merge_shards, shard_of, write_shards
from pipeline.config import RunConfig, load_run_config
from tests.flows.flows_helpers import REPO, fingerprint

SCHEMA = pa.schema([pa.field("problem_id", pa.string(), nullable=False), pa.field("x", pa.int64())])


def test_demo_config_validates_and_composes_the_stage_configs() -> None:
    cfg = load_run_config(REPO / "configs" / "demo.yaml")
    assert cfg.work_dir == Path("out/demo/work") and cfg.hub_dir == Path("out/demo/hub")
    assert cfg.assemble.build_id == cfg.build_id and cfg.build_id.startswith("b_")
    assert {s.kind for s in cfg.sample.sources} == {"model", "reference", "mutant"}
    # every model source samples one of the tiny local policies the flow fits first
    fitted = {p.dir.resolve(): p for p in cfg.policies}
    models = [s for s in cfg.sample.sources if s.kind == "model"]
    assert {s.tier for s in models} == {"weak", "strong"}
    assert all(Path(s.model).resolve() in fitted and s.revision.startswith("fit-") for s in models)
    assert {s.tier for s in cfg.sample.sources} == {"weak", "strong"}
    assert cfg.dpo.judges and cfg.tiny_model is not None


@pytest.mark.parametrize("path", sorted((REPO / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_every_top_level_config_validates(path: Path) -> None:
    assert isinstance(load_run_config(path), RunConfig)


def test_inline_dict_seed_propagation_and_build_id() -> None:
    a = load_run_config({"seed": 7, "splits": {"seed": 3}})
    assert a.splits.seed == 3 and a.assemble.seed == 7 and a.dpo.seed == 7 and a.mixed.seed == 7
    # The build id follows the data-deciding sections only.
    b = load_run_config(
        {"seed": 7, "splits": {"seed": 3}, "runner": {"judge_shards": 8}, "out_dir": "x"}
    )
    c = load_run_config({"seed": 8, "splits": {"seed": 3}})
    assert a.build_id == b.build_id != c.build_id


def test_bad_config_names_the_field(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump({"splits": {"heldout_fraction": 2}}))
    with pytest.raises(ValueError, match="(?s)bad.yaml.*heldout_fraction"):
        load_run_config(p)
    with pytest.raises(ValueError, match="mixed.split"):
        load_run_config({"mixed": {"split": "adv"}})


def _table(n: int) -> pa.Table:
    return pa.table(
        {"problem_id": [f"p{i % 7}" for i in range(n)], "x": list(range(n))}, schema=SCHEMA
    )


def test_shards_keep_problems_together_and_merge_is_shard_count_independent(tmp_path: Path) -> None:
    src = write_parquet(_table(50), tmp_path / "in.parquet", SCHEMA)
    merged = []
    for n in (1, 3):
        parts = write_shards([src], n, tmp_path / f"s{n}", "rows", SCHEMA)
        assert len(parts) == n
        for i, part in enumerate(parts):
            ids = set(pq.read_table(part).column("problem_id").to_pylist())
            assert all(shard_of(pid, n) == i for pid in ids)
        merged.append(merge_shards(parts, tmp_path / f"m{n}.parquet", SCHEMA).read_bytes())
    assert merged[0] == merged[1]


def test_unchanged_shard_is_not_rewritten(tmp_path: Path) -> None:
    src = write_parquet(_table(20), tmp_path / "in.parquet", SCHEMA)
    first = write_shards([src], 3, tmp_path / "s", "rows", SCHEMA)
    before = [fingerprint(p) for p in first]
    again = write_shards([src], 3, tmp_path / "s", "rows", SCHEMA)
    assert again == first and [fingerprint(p) for p in again] == before
    # Changing rows of shard 0 only rewrites shard 0 and leaves the others as they were.
    t = _table(20)
    in_0 = [shard_of(pid, 3) == 0 for pid in t.column("problem_id").to_pylist()]
    assert 0 < sum(in_0) < 20
    xs = [-1 if z else x for z, x in zip(in_0, t.column("x").to_pylist())]
    write_parquet(t.set_column(1, "x", pa.array(xs, pa.int64())), src, SCHEMA)
    third = write_shards([src], 3, tmp_path / "s", "rows", SCHEMA)
    assert [fingerprint(p) == f for p, f in zip(third, before)] == [False, True, True]


def test_only_transient_failures_are_retried() -> None:
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    def Resp(status: int) -> httpx2.Response:
        return httpx2.Response(status, request=httpx2.Request("POST", "http://hub.invalid/api/x"))

    assert is_transient(ConnectionResetError())
    assert is_transient(TimeoutError())
    assert is_transient(HfHubHTTPError("x", response=Resp(503)))
    assert not is_transient(HfHubHTTPError("x", response=Resp(401)))
    assert not is_transient(ValueError("bad config"))
    assert not is_transient(FileNotFoundError("no input"))


def test_prefect_yaml_entrypoints_load_and_defaults_validate() -> None:
    from prefect.flows import load_flow_from_entrypoint

    spec = yaml.safe_load((REPO / "prefect.yaml").read_text())
    names = set()
    for dep in spec["deployments"]:
        flow = load_flow_from_entrypoint(str(REPO / dep["entrypoint"]))
        names.add(flow.name)
        # the demo's pool is chosen at deploy time (PREFECT_DEFAULT_WORK_POOL_NAME); the other
        # machines' deployments name their own, never the laptop's
        pool = (dep.get("work_pool") or {}).get("name")
        assert (pool is None) == (dep["name"] == "demo"), (dep["name"], pool)
        params = dep.get("parameters", {})
        assert set(params) <= set(flow.parameters.properties), (flow.name, params)
        if isinstance(params.get("config"), str):  # a run config file
            load_run_config(REPO / params["config"])
        elif "config" in params:  # a flow's own settings inline (best-of-n): they validate
            flow.validate_parameters(params)
    assert names == {
        "build-aletheia-train",
        "build-aletheia-eval",
        "publish-aletheia",
        "train-verifier",
        "evaluate-verifier",
        "rlvr-study",
        "evaluate-policy",
        "aletheia-ablation",
        "best-of-n",
    }
