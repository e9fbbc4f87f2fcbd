"""build-aletheia-train end to end on a real (ephemeral) Prefect server and the Docker sandbox:
a run killed mid-way, restarted (redoing nothing that finished), and run once more (all cached)."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pipeline.publish.shown import config_fingerprints
from tests.flows.flows_helpers import REPO, fingerprint, small_config

pytestmark = [pytest.mark.docker, pytest.mark.slow]

FINISHED_BEFORE_KILL = (  # outputs of the stages that finish before the kill
    "problems.parquet",
    "splits/train.parquet",
    "splits/heldout.parquet",
    "splits/assignments.parquet",
    "candidates.parquet",
    "judge/judged-0000-of-0002.parquet",
    "judge/judged-0001-of-0002.parquet",
    "judged.parquet",
)


def _published(out: dict[str, Any]) -> dict[str, Any]:
    """What a train build's `publish` node made: rows, split rows, checks, hub_dir."""
    return out["publish"]["stats"]  # type: ignore[no-any-return]


def _fingerprints(work: Path) -> dict[str, tuple[int, int, str]]:
    return {rel: fingerprint(work / rel) for rel in FINISHED_BEFORE_KILL}


def _states(runs: list[Any]) -> dict[str, list[str]]:
    """stage -> the state of each of its task runs (one per shard for the sharded stages)."""
    out: dict[str, list[str]] = {}
    for r in runs:
        out.setdefault(r.name.rsplit("-", 1)[0], []).append(r.state_name)
    return out


def _run_killed_after_judge(cfg_path: Path, work: Path, api_url: str, log: Path) -> int:
    """Start the flow in its own process; SIGKILL it as soon as judging has finished."""
    env = {**os.environ, "PREFECT_API_URL": api_url, "PYTHONUNBUFFERED": "1"}
    code = (
        "import json, sys; from flows.build import build_aletheia_train; "
        "build_aletheia_train(json.load(open(sys.argv[1])))"
    )
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", code, str(cfg_path)],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and proc.poll() is None:
            if (work / "judged.parquet").exists():
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.05)
        else:
            proc.kill()
        return proc.wait(timeout=60)


def _task_runs_since(t0: datetime) -> list[Any]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.sorting import TaskRunSort

    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(sort=TaskRunSort.EXPECTED_START_TIME_DESC, limit=200)
    return [r for r in runs if r.created and r.created >= t0]


@pytest.fixture(scope="module")
def build(
    prefect_api: str, small_bundled: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    from flows.build import build_aletheia_train

    root = tmp_path_factory.mktemp("flowbuild")
    cfg = small_config(root / "out", small_bundled, root / "tiny-model")
    cfg_path = root / "config.json"
    cfg_path.write_text(json.dumps(cfg))
    work = root / "out" / "work"

    t = time.monotonic()
    rc = _run_killed_after_judge(cfg_path, work, prefect_api, root / "run1.log")
    killed_s = time.monotonic() - t
    before = _fingerprints(work)
    hub_after_kill = (root / "out" / "hub" / "README.md").exists()

    t2 = datetime.now(UTC)
    second = build_aletheia_train(cfg)
    after_second = _fingerprints(work)
    runs2 = _task_runs_since(t2)

    t3 = datetime.now(UTC)
    third = build_aletheia_train(cfg)
    runs3 = _task_runs_since(t3)
    return {
        "cfg": cfg,
        "root": root,
        "work": work,
        "rc": rc,
        "killed_s": killed_s,
        "before": before,
        "after_second": after_second,
        "after_third": _fingerprints(work),
        "hub_after_kill": hub_after_kill,
        "second": second,
        "third": third,
        "runs2": runs2,
        "runs3": runs3,
        "log1": (root / "run1.log").read_text(),
    }


def test_killed_run_was_killed_mid_way(build: dict[str, Any]) -> None:
    assert build["rc"] == -signal.SIGKILL, build["log1"][-3000:]
    assert not build["hub_after_kill"]  # it died before publishing


def test_restart_redoes_nothing_that_finished(build: dict[str, Any]) -> None:
    assert build["after_second"] == build["before"]  # same inode and bytes: not re-executed
    states = _states(build["runs2"])
    runner = build["cfg"]["runner"]
    expected = {"ingest": 1, "splits": 1, "sample-shard": runner["sample_shards"],
                "judge-shard": runner["judge_shards"]}  # fmt: skip
    for stage, shards in expected.items():
        assert states.get(stage) == ["Cached"] * shards, (stage, states)
    assert _published(build["second"])["rows"] == _published(build["third"])["rows"]


def test_all_nine_configs_are_built_and_load(build: dict[str, Any]) -> None:
    import datasets

    from schemas.dataset_configs import CONFIG_BY_NAME, CONFIG_NAMES

    published = _published(build["second"])
    hub = Path(published["hub_dir"])
    assert (hub / "README.md").exists()
    assert published["rows"].keys() == set(CONFIG_NAMES)
    split_rows = published["split_rows"]
    for name in CONFIG_NAMES:
        assert published["rows"][name] > 0, name
        ds = datasets.load_dataset(str(hub), name, cache_dir=str(build["root"] / "hf-cache"))
        assert list(ds) == list(CONFIG_BY_NAME[name].splits)
        for split in CONFIG_BY_NAME[name].splits:
            assert ds[split].num_rows == split_rows[name][split] > 0, (name, split)
    # the evaluation sets are lists, and Adv is built from Heldout's test split
    for name in ("heldout", "strong", "hard", "adv"):
        sizes = set(datasets.load_dataset(str(hub), name, split="test",
                    cache_dir=str(build["root"] / "hf-cache"))["num_candidates"])  # fmt: skip
        assert max(sizes) >= 3, (name, sizes)
    assert split_rows["adv"]["test"] == split_rows["adv"]["full"]
    assert split_rows["adv"]["test"] % split_rows["heldout"]["test"] == 0
    assert all(c["passed"] for c in published["checks"])
    work = build["work"]
    assert (work / "problems.parquet").exists() and (work / "judged.parquet").exists()


def test_third_run_is_entirely_cached(build: dict[str, Any]) -> None:
    stages = {
        "ingest",
        "splits",
        "sample-shard",
        "judge-shard",
        "assemble",
        "adversarial-edits",
        "mixed-judge-shard",  # the re-judges of the bias edits, as judge shards
        "adv-judge-shard",
        "adversarial",
        "tiny-model",
        "dpo-responses-shard",
        "mixed-dpo-responses-shard",
        "dpo-pairs",
        "manifest",  # build.json: a graph node like the others
        "publish",
        "evaluate",  # the evaluation after publish: a graph node, its marker matched too
    }
    states = {k: v for k, v in _states(build["runs3"]).items() if k in stages}
    assert set(states) == stages
    assert all(set(v) == {"Cached"} for v in states.values()), states
    for stage in ("judge-shard", "mixed-judge-shard", "adv-judge-shard"):  # each shard
        assert len(states[stage]) == build["cfg"]["runner"]["judge_shards"], stage
    # dpo and mixed_dpo, each in runner.dpo_shards shards
    for stage in ("dpo-responses-shard", "mixed-dpo-responses-shard"):
        assert len(states[stage]) == build["cfg"]["runner"]["dpo_shards"], stage
    assert build["after_third"] == build["before"]


def test_aletheia_stage_evaluate_reuses_the_builds_evaluation(
    build: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """The inline executor (`aletheia stage evaluate`) and the flow's share one cache: the
    evaluation node's marker, which the build wrote after publish."""
    from aletheia.cli import main

    with pytest.raises(SystemExit) as e:
        main(["stage", "evaluate", "-c", str(build["root"] / "config.json")])
    said = capsys.readouterr()
    assert not e.value.code, said.out + said.err
    done = json.loads(said.out[said.out.index("{") :])
    assert done["node"] == "evaluate" and done["cached"], done
    assert Path(done["outputs"]["report"]) == build["root"] / "out" / "eval" / "report.json"
    assert build["second"]["evaluate"]["outputs"] == done["outputs"]


def test_artifacts_in_the_ui(build: dict[str, Any]) -> None:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        arts = client.read_artifacts(limit=200)
    latest = {}
    for a in sorted(arts, key=lambda a: a.created):
        if a.key:
            latest[a.key] = a
    progress = ("sample", "judge", "mixed-judge", "adv-judge", "dpo-responses",
                "mixed-dpo-responses")  # the sharded nodes  # fmt: skip
    for key in (f"flowtest-{stage}-progress" for stage in progress):
        assert latest[key].type == "progress" and float(latest[key].data) == 100.0
    assert latest["flowtest-judged-counts"].type == "table"
    judged = latest["flowtest-judged-counts"].data
    judged = json.loads(judged) if isinstance(judged, str) else judged
    assert [r["count"] for r in judged if r["split"] == "judge quarantine"] == [0]
    for section in ("mixed", "adv"):  # edits per bias type, rejected by the re-judge or not
        rejected = latest[f"flowtest-{section}-rejected-edits"]
        rows = json.loads(rejected.data) if isinstance(rejected.data, str) else rejected.data
        assert sum(r["accepted"] for r in rows) > 0 and sum(r["not_rejudged"] for r in rows) == 0
    table = latest["flowtest-dataset-counts"]
    assert table.type == "table"
    rows = json.loads(table.data) if isinstance(table.data, str) else table.data
    assert {"split", "language", "model", "verdict", "count"} <= set(rows[0])
    assert {r["split"] for r in rows} >= {"train", "heldout", "strong", "hard", "adv", "dpo"}
    summary = latest["flowtest-summary"]
    assert summary.type == "markdown"
    hub = Path(_published(build["second"])["hub_dir"])
    assert str(hub) in summary.data and "invariant 1" in summary.data
    assert "## Fingerprints" in summary.data
    fp = config_fingerprints(hub)["heldout"]
    assert f"| published | heldout | {fp['rows']} | `{fp['hash']}` |" in summary.data


def test_every_stage_prints_its_fingerprint(build: dict[str, Any]) -> None:
    """fingerprints.json names every stage's outputs with their rows and content hash,
    recomputed here from the files; the build summary shows them; the cached third run
    gives the same lines as the second."""
    from pipeline.common.fingerprint import table_fingerprint

    work = build["work"]
    prints = json.loads((work / "fingerprints.json").read_text())
    stages = {e["stage"] for e in prints}
    assert {
        "ingest", "splits", "fit demo-policy-weak", "fit demo-policy-strong", "sample",
        "judge", "tiny-model", "assemble", "mixed-edits", "mixed-judge", "mixed", "dpo",
        "mixed-dpo", "adv-edits", "adv-judge", "adv", "published",
    } <= stages  # fmt: skip
    hub = Path(_published(build["second"])["hub_dir"])
    for e in prints:
        if e.get("file"):
            assert table_fingerprint(work / e["file"]) == {"rows": e["rows"], "hash": e["hash"]}
        elif e["stage"] == "published":  # a published split, its shards as one table
            assert config_fingerprints(hub)[e["output"]] == {"rows": e["rows"], "hash": e["hash"]}
        else:  # a model: its weights hash
            assert len(e["hash"]) == 16 and e["rows"] is None
    judged = next(e for e in prints if (e["stage"], e["output"]) == ("judge", "judged"))
    assert judged["tests_stopped_by_wall_clock"] >= 0 and "programs_near_time_limit" in judged
    second = {e["output"]: e for e in prints if e["stage"] == "published"}
    rows = _published(build["third"])["rows"]
    whole = {c: fp for c, fp in second.items() if "/" not in c}  # train / full
    assert set(whole) == set(rows)
    assert {c.split("/")[0] for c in second if c.endswith("/test")} == {
        "heldout", "strong", "hard", "adv",
    }  # fmt: skip
    assert all(second[c]["rows"] == n for c, n in rows.items())
    by_config = {e["output"]: e["hash"] for e in prints if e["stage"] == "assemble"}
    assert second["train"]["hash"] == by_config["train"]  # published as assembled


def test_readme_numbers_are_measured_from_the_build(build: dict[str, Any], tmp_path: Path) -> None:
    """scripts/readme_numbers.py on a real build: every number it records is the build's
    own (rows per split from the flow's result, list sizes from the published rows, Adv's
    edits from the edits stage's stats.json, DPO's routes from the rows, the evaluation's
    headline from its report); `record` writes a README block that `check BUILD` passes,
    and `check BUILD` fails on a record that differs from the build by one row."""
    import subprocess
    import sys

    import pyarrow.parquet as pq

    from pipeline.common.hub_folder import read_config
    from pipeline.evaluate.report import headline
    from scripts import readme_numbers as rn

    out, work = build["root"] / "out", build["work"]
    found = rn.measure_build(out)
    split_rows = _published(build["second"])["split_rows"]
    for s in found["splits"]:
        names = ["test", "full"] if s["split"] == "test = full" else [s["split"]]
        assert all(split_rows[s["config"]][n] == s["rows"] for n in names), s
        table = read_config(out / "hub", s["config"], split=names[0])
        if "sizes" in s:
            sizes = table.column("num_candidates").to_pylist()
            assert s["sizes"] == {str(n): sizes.count(n) for n in (2, 3, 4, 5)}, s
    assert {(s["config"], s["split"]) for s in found["splits"]} >= {("adv", "test = full")}
    stats = json.loads((work / "adv" / "edits" / "stats.json").read_text())
    assert found["adv_edits"]["planned"] == stats["edits_planned"] > 0
    assert found["adv_edits"]["carried_unchanged"] == stats["edits_carried_unchanged"]
    assert (
        found["adv_edits"]["programs_rejudged"]
        == pq.read_metadata(work / "adv" / "edits" / "edits.parquet").num_rows
    )
    for name in ("dpo", "mixed_dpo"):
        sources = read_config(out / "hub", name).column("chosen_source").to_pylist()
        assert found["dpo_chosen_source"][name] == {
            r: sources.count(r) for r in ("sampled", "regenerated", "gold_spliced")
        }
    assert found["problems"] == pq.read_metadata(work / "problems.parquet").num_rows
    report = json.loads((out / "eval" / "report.json").read_text())
    assert found["evaluation"]["headline"] == headline(report).splitlines()

    readme, record = tmp_path / "README.md", tmp_path / "demo-build.json"
    readme.write_text(f"# title\n\n{rn.BEGIN}\n{rn.END}\n\nthe rest\n")
    script = [sys.executable, str(REPO / "scripts" / "readme_numbers.py")]
    files = ["--readme", str(readme), "--record", str(record)]
    wrote = subprocess.run(
        [*script, "record", str(out), "--readme", str(readme), "--out", str(record)],
        check=False, capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    assert wrote.returncode == 0, wrote.stderr
    assert readme.read_text().endswith("\n\nthe rest\n") and "| adv | test = full |" in (
        readme.read_text()
    )
    ok = subprocess.run(
        [*script, "check", str(out), *files], check=False, capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stderr
    saved = json.loads(record.read_text())
    saved["splits"][0]["rows"] += 1
    record.write_text(json.dumps(saved))
    readme.write_text(rn.with_block(readme.read_text(), rn.render(saved)))  # README = record
    bad = subprocess.run(
        [*script, "check", str(out), *files], check=False, capture_output=True, text=True
    )
    assert bad.returncode == 1
    first = saved["splits"][0]
    rows = first["rows"]
    assert f"splits.{first['config']}/{first['split']}.rows: {rows} != {rows - 1}" in bad.stderr


def test_demo_result_prints_each_configs_rows_and_fingerprint(build: dict[str, Any]) -> None:
    """scripts/demo_result.py (the end of scripts/demo.sh) on a real build: a line per config
    and split with the published rows and the fingerprint publish recorded, and the places."""
    cfg_path = build["root"] / "config.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "demo_result.py"), str(cfg_path)],
        check=False, capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    hub = build["root"] / "out" / "hub"
    prints = config_fingerprints(hub)
    lines = {tuple(line.split()[:2]): line.split()[2:] for line in done.stdout.splitlines()}
    split_rows = _published(build["second"])["split_rows"]
    for key, fp in prints.items():
        config, split = key.split("/") if "/" in key else (key, None)
        split = split or next(s for s in split_rows[config] if s != "test")
        assert lines[(config, split)] == [str(fp["rows"]), fp["hash"]], key
    assert f"dataset (laid out as pushed): {hub.resolve()}" in done.stdout


def test_the_log_shows_progress_and_fingerprints(build: dict[str, Any]) -> None:
    """What the terminal shows: a progress line per long stage, fingerprint lines."""
    log = build["log1"]  # the killed first run's console output (fits, sampling, judging)
    assert "[progress] judge " in log and " programs" in log, log[-3000:]
    assert "[progress] fit-policy " in log and "[fingerprint] ingest problems:" in log


def test_cli_build_train_runs_the_flow_without_a_server(build: dict[str, Any]) -> None:
    from typer.testing import CliRunner

    from aletheia.cli import app

    cfg_yaml = build["root"] / "config.yaml"
    import yaml

    cfg_yaml.write_text(yaml.safe_dump(build["cfg"]))
    result = CliRunner().invoke(app, ["build-train", "--config", str(cfg_yaml)])
    assert result.exit_code == 0, result.output
    said = json.loads(result.output[result.output.index("{") :])
    assert said["hub_dir"] == str(Path(_published(build["second"])["hub_dir"]).resolve())
    assert set(said["outputs"]) == {"evaluate"}  # the build's end: nothing reads its report


def test_train_then_evaluate_flows_on_the_built_dataset(build: dict[str, Any]) -> None:
    """train-verifier (DPO, 2 CPU steps on the tiny model) then evaluate-verifier on its output."""
    import yaml

    from flows.train import evaluate_verifier, train_verifier

    root, hub = build["root"], _published(build["second"])["hub_dir"]
    train_cfg = {
        "name": "flowtest-dpo", "method": "dpo", "model": build["cfg"]["tiny_model"]["dir"],
        "output_dir": str(root / "train-dpo"), "data": {"dir": hub, "config": "dpo"},
        "optim": {"max_steps": 2, "per_device_train_batch_size": 1, "bf16": False, "use_cpu": True,
                  "save_steps": 1000},
        "dpo": {"max_length": 2048},
    }  # fmt: skip
    path = root / "train-dpo.yaml"
    path.write_text(yaml.safe_dump(train_cfg))
    summary = train_verifier(str(path))
    assert summary["global_step"] == 2 and Path(summary["model_path"]).exists()

    report = evaluate_verifier(
        summary["model_path"], hub, str(root / "eval"),
        {"k": 2, "limit": 1, "max_new_tokens": 16, "device": "cpu", "batch_size": 2},
    )  # fmt: skip
    written = json.loads((root / "eval" / "report.json").read_text())
    assert written["model"] == summary["model_path"] and written["config"]["k"] == 2
    assert set(written["splits"]) == {"heldout", "strong", "hard", "adv"} == set(report["splits"])
    rows = [json.loads(x) for x in (root / "eval" / "responses.jsonl").read_text().splitlines()]
    for split, m in written["splits"].items():
        a, v = m["aletheia"], m["vote_share"]  # Aletheia's protocol first, ours second
        assert (a["instances"], a["k"]) == (1, 2) == (v["instances"], v["k"]), split  # limit 1, K 2
        for key in ("top1_accuracy", "majority_accuracy", "best_of_k_accuracy"):
            assert 0.0 <= a[key] <= 1.0, (split, key, a[key])
        assert a["best_of_k_accuracy"] >= a["top1_accuracy"]  # any-correct >= first-correct
        for key in ("self_consistency_accuracy", "invalid_rate"):
            assert 0.0 <= v[key] <= 1.0, (split, key, v[key])
        for key in ("pairwise_accuracy", "ndcg"):  # null when the ranking is undefined
            assert a[key] is None or 0.0 <= a[key] <= 1.0, (split, key, a[key])
        assert a["kendall_tau_b"] is None or -1.0 <= a["kendall_tau_b"] <= 1.0
        assert sum(r["split"] == split and r["pair"] is None for r in rows) == 2, split  # K = 2
    markdown = (root / "eval" / "report.md").read_text()
    assert all(f"| {split} |" in markdown for split in written["splits"])


# Each training method for real steps on rows the pipeline produced from the bundled problems
# (the DPO path runs through the train-verifier flow above).
_METHODS_ON_BUILT_ROWS = {
    "grpo-think": {"method": "grpo", "data": "mixed", "prompt": {"style": "think"}},
    "grpo-instruct": {"method": "grpo", "data": "train", "prompt": {"style": "instruct"}},
    "sft": {"method": "sft", "data": "dpo"},
    "rlvr-gspo": {"method": "rlvr", "data": "train_questions", "rlvr": {"algorithm": "gspo"}},
}


@pytest.mark.parametrize("name", sorted(_METHODS_ON_BUILT_ROWS))
def test_every_method_trains_on_pipeline_rows(
    build: dict[str, Any], name: str, sandbox_client: Any
) -> None:
    from pipeline.train.config import TrainConfig
    from pipeline.train.run import train

    spec = dict(_METHODS_ON_BUILT_ROWS[name])
    data_config = spec.pop("data")
    method = spec["method"]
    generation = {"num_generations": 2, "max_completion_length": 24}
    section = {
        "grpo": {**spec.get("grpo", {}), **generation},
        "rlvr": {**spec.get("rlvr", {}), **generation},
        "sft": {"max_length": 2048},
    }.get(method, {})
    cfg = TrainConfig.model_validate({
        "name": f"built-{name}", "method": method, "model": build["cfg"]["tiny_model"]["dir"],
        "output_dir": str(build["root"] / f"train-{name}"),
        "data": {"dir": _published(build["second"])["hub_dir"], "config": data_config,
                 "limit": 4},
        "lora": {"r": 4, "alpha": 8} if method == "rlvr" else None,
        "prompt": spec.get("prompt", {}),
        # no warmup: with one step, a warmup step would leave the learning rate at 0
        "optim": {"max_steps": 1, "per_device_train_batch_size": 2, "bf16": False,
                  "use_cpu": True, "save_steps": 1000, "warmup_ratio": 0.0},
        method: section,
    })  # fmt: skip
    summary = train(cfg, sandbox_client=sandbox_client)
    assert summary["global_step"] == 1 and summary["method"] == method
    assert math.isfinite(summary["train_loss"])
    model_path = Path(summary["model_path"])
    weights = "model.safetensors"  # LoRA (rlvr) returns the merged model, loadable as is
    assert (model_path / weights).stat().st_size > 0 and (model_path / "config.json").exists()
    logs = [json.loads(line) for line in Path(summary["metrics_log"]).read_text().splitlines()]
    losses = [r["loss"] for r in logs if "loss" in r]
    assert losses and all(math.isfinite(v) for v in losses)
    if method in ("grpo", "rlvr"):  # the reward functions ran on real completions
        rewards = [v for r in logs for k, v in r.items() if k == "reward"]
        assert rewards and all(math.isfinite(v) for v in rewards), logs
    if method == "sft":  # a full fine-tuning step moves the weights
        from safetensors.numpy import load_file

        before = load_file(str(Path(build["cfg"]["tiny_model"]["dir"]) / "model.safetensors"))
        after = load_file(str(model_path / weights))
        assert any((before[k] != after[k]).any() for k in before if k in after)


# --- resolve once, check once --------------------------------------------------------------


@pytest.fixture
def spies(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Spies wrapping the real `resolve_run_config`, every full RunConfig validation and
    `preflight` (with the stages it was limited to), in every module of ours holding them.

    A validation is counted through `_stamp_policy_revisions`, the first thing the
    `_propagate` validator does: pydantic compiled `_propagate` itself into the model's
    validator when the class was built, so patching that name would see nothing. Every
    full validation runs it, Prefect's parameter validation included."""
    import pipeline.config as C
    import pipeline.preflight as P

    seen: dict[str, list[Any]] = {"resolve": [], "validate": [], "preflight": []}
    real_resolve = C.resolve_run_config
    real_stamp = C.RunConfig._stamp_policy_revisions
    real_preflight = P.preflight

    def resolve(source: Any, **kw: Any) -> Any:
        seen["resolve"].append(source)
        return real_resolve(source, **kw)

    def stamp(self: Any) -> None:
        seen["validate"].append(self.name)
        real_stamp(self)

    def check(cfg: Any, **kw: Any) -> Any:
        seen["preflight"].append(tuple(kw.get("only", ())))
        return real_preflight(cfg, **kw)

    for name, mod in list(sys.modules.items()):
        if mod is None or name.split(".")[0] not in ("flows", "pipeline", "aletheia"):
            continue
        if getattr(mod, "resolve_run_config", None) is real_resolve:
            monkeypatch.setattr(mod, "resolve_run_config", resolve)
        if getattr(mod, "preflight", None) is real_preflight:
            monkeypatch.setattr(mod, "preflight", check)
    monkeypatch.setattr(C.RunConfig, "_stamp_policy_revisions", stamp)
    return seen


def _counts(seen: dict[str, list[Any]]) -> tuple[int, int, int]:
    return len(seen["resolve"]), len(seen["validate"]), len(seen["preflight"])


def test_a_flow_given_a_path_resolves_validates_and_checks_once(
    build: dict[str, Any], spies: dict[str, list[Any]]
) -> None:
    """A deployment passes a path: the train flow resolves it once, validates it once and
    preflights it once, though it walks every node, publish included (a fourth run on the
    module's build: fully cached; the counts do not depend on caching)."""
    from flows.build import build_aletheia_train

    out = build_aletheia_train(str(build["root"] / "config.json"))
    assert _counts(spies) == (1, 1, 1), spies
    assert spies["preflight"] == [()]  # every stage's check
    assert _published(out)["rows"] == _published(build["second"])["rows"]


def test_cli_build_train_resolves_and_checks_once_before_prefect(
    build: dict[str, Any], spies: dict[str, list[Any]]
) -> None:
    """`build-train --dry-run --limit 2`: the limit goes into the raw mapping, so one
    validation gives the limited build id (before C3: two resolves, two validations)."""
    import yaml
    from typer.testing import CliRunner

    from aletheia.cli import app

    path = build["root"] / "config-count.yaml"
    path.write_text(yaml.safe_dump(build["cfg"]))
    args = ["build-train", "--config", str(path), "--dry-run", "--limit", "2"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert _counts(spies) == (1, 1, 1), spies


def test_build_eval_resolves_validates_and_checks_once(
    build: dict[str, Any], spies: dict[str, list[Any]]
) -> None:
    from flows.build import build_aletheia_eval
    from pipeline.preflight import evaluation_nodes

    out = build_aletheia_eval(str(build["root"] / "config.json"))
    assert _counts(spies) == (1, 1, 1), spies
    assert spies["preflight"] == [evaluation_nodes()]  # its own nodes' checks, no DPO judge
    assert Path(out["adv"]["outputs"]["adv"]).exists() and "publish" not in out


def test_publish_alone_resolves_once_and_checks_only_the_hub(
    build: dict[str, Any], spies: dict[str, list[Any]]
) -> None:
    from flows.build import publish_aletheia
    from pipeline.stages import RELEASE

    out = publish_aletheia(str(build["root"] / "config.json"))
    assert _counts(spies) == (1, 1, 1), spies
    assert spies["preflight"] == [RELEASE]
    assert _published(out) == _published(build["second"]) and out["publish"]["cached"]
