"""Preflight as one loop (issue 24 C1): every stage of the build checks each of its sections
once per run of each graph node, with its own check (pipeline/stages.py GRAPH), and a publish of an existing build
checks only the Hub. Spies wrap the real checks (they record and pass through); the configs
are the demo's with real mistakes in them (a missing source file, a misspelt template, a
DPO model that is nowhere), checked against an empty HF cache as tests/test_preflight.py."""

from __future__ import annotations

import dataclasses
import importlib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipeline.common.graph import Graph
from pipeline.common.stage import CheckContext, Finding, Stage
from pipeline.config import RunConfig, load_run_config
from pipeline.preflight import PreflightError, preflight, require_hub
from pipeline.stages import GRAPH, RELEASE, STAGES

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _empty_hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.delenv("HF_TOKEN", raising=False)


def _broken_demo(tmp_path: Path) -> RunConfig:
    """The demo with one mistake for each of four stages' checks and the Hub push on."""
    raw = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())
    raw["out_dir"] = str(tmp_path / "out")
    raw["sources"] = ["bundled", f"jsonl:{tmp_path}/missing.jsonl"]
    template = tmp_path / "verifier.txt"
    template.write_text("{questoin}\n{candidates}\n{valid_options}\n")
    raw["prompt_template"] = str(template)
    raw["dpo"]["judges"][0]["model_path"] = str(tmp_path / "no-such-model")
    raw["hub"] = {"push": True, "repo_id": "not-a-repo-id"}
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_run_config(path)


def test_preflight_runs_each_stage_check_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = _broken_demo(tmp_path)
    plain = preflight(cfg, docker=False)
    calls: list[tuple[str, Any]] = []
    returned: dict[str, list[Finding]] = {}

    def spy(stage: Stage[Any]) -> Stage[Any]:
        real = stage.check

        def check(section: Any, ctx: CheckContext) -> Iterable[Finding]:
            calls.append((stage.name, section))
            found = list(real(section, ctx))
            returned.setdefault(stage.name, []).extend(found)
            return found

        return dataclasses.replace(stage, check=check)

    spied = Graph([dataclasses.replace(n, stage=spy(n.stage)) for n in GRAPH])
    monkeypatch.setattr("pipeline.stages.GRAPH", spied)
    report = preflight(cfg, docker=False)

    # Once per run of each graph node, in build order; the demo: two fitted policies, one
    # tiny model, the Mixed and Adv sets (edits, re-judge and split each), dpo and mixed_dpo.
    assert Counter(name for name, _ in calls) == {
        "ingest": 1,
        "splits": 1,
        "fit-policy": 2,
        "tiny-model": 1,
        "sample": 1,
        "judge": 3,  # the candidates, and the Mixed and Adv re-judges with their own settings
        "assemble": 1,
        "adversarial-edits": 2,
        "adversarial": 2,
        "dpo-responses": 2,
        "dpo-pairs": 2,
        "manifest": 1,
        "publish": 1,
        "push": 1,  # hub.push is on
        "evaluate": 1,  # the demo's `evaluate:` section: its verifier, after publish
    }
    assert [name for name, _ in calls] == [n.stage.name for n in GRAPH for _ in n.calls(cfg)]
    # Each check got its own section, never the run config.
    sections = dict(calls)
    assert sections["sample"] == cfg.sample and sections["assemble"] == cfg.assemble
    assert sections["dpo-responses"] == cfg.dpo.model_copy(update={"name": "mixed_dpo"})
    assert sections["push"].repo_id == cfg.hub.repo_id and sections["push"].folder == cfg.hub_dir
    assert sections["manifest"].build_id == cfg.build_id
    assert sections["evaluate"].model == cfg.evaluate.model
    assert sections["evaluate"].hub_dir == cfg.hub_dir
    judged = [s for name, s in calls if name == "judge"]
    assert [j.judge for j in judged] == [cfg.judge, cfg.mixed.judge, cfg.adv.judge]
    assert sections["ingest"].sources == cfg.sources
    assert not any(isinstance(s, RunConfig) for _, s in calls)
    # The findings are the stages' own, the same as without spies.
    assert report.findings == plain.findings
    checks = {name: {f.check for f in found} for name, found in returned.items() if found}
    assert checks == {
        "ingest": {"sources"},
        "assemble": {"templates"},
        "dpo-responses": {"models", "templates"},
        "push": {"hub"},
    }, checks
    from_stages = [f for found in returned.values() for f in found]
    assert all(f in report.findings for f in from_stages)
    # The propagated template reached assemble and dpo alike: both name it by its run-level
    # key, and the report keeps the one finding once.
    alike = [f for f in from_stages if f.check == "templates"]
    assert len(alike) == 3 and alike[0] == alike[1] == alike[2], alike  # assemble, 2 dpo
    assert alike[0].message.startswith("prompt_template: ")
    assert [f for f in report.findings if f.check == "templates"] == alike[:1]


def test_standalone_publish_checks_only_the_hub(tmp_path: Path) -> None:
    cfg = _broken_demo(tmp_path)
    everything = {f.check for f in preflight(cfg, docker=False).findings if f.fatal}
    assert everything == {"sources", "models", "templates", "hub"}, everything

    report = preflight(cfg, docker=False, only=RELEASE)
    assert report.findings == [
        Finding("hub", "hub.push is on but hub.repo_id is 'not-a-repo-id'; set namespace/name"),
        Finding("hub", "hub.push is on but HF_TOKEN is not set in the environment"),
    ]
    assert report.sources == []  # ingest's check (which reads the sources) did not run
    with pytest.raises(PreflightError, match=r"\[hub\] hub.push is on but hub.repo_id"):
        require_hub(cfg)
    with pytest.raises(ValueError, match=r"only=\['pubish'\]: no such node"):
        preflight(cfg, docker=False, only=("pubish",))  # a typo checks nothing: refused


def test_every_stage_value_is_listed_and_planned() -> None:
    """STAGES names every module-level Stage of the pipeline's stage modules; GRAPH runs each
    but those run through the same Prefect task outside it (a code policy's evaluation, the
    RLVR study's; Best-of-N)."""
    modules = [
        "pipeline.problems.stage",
        "pipeline.splits.stage",
        "pipeline.models.stage",
        "pipeline.sampling.stage",
        "pipeline.judge.stage",
        "pipeline.instances.stage",
        "pipeline.instances.adversarial.stage",
        "pipeline.instances.dpo.stage",
        "pipeline.publish.manifest",
        "pipeline.publish.stage",
        "pipeline.publish.release",
        "pipeline.evaluate.stage",
        "pipeline.policy_eval.stage",
        "pipeline.bestofn.stage",
    ]
    found = {
        value.name: value
        for name in modules
        for value in vars(importlib.import_module(name)).values()
        if isinstance(value, Stage)
    }
    assert found == STAGES
    assert list(dict.fromkeys(n.stage.name for n in GRAPH)) == list(STAGES)[:-2]
    assert list(STAGES)[-2:] == ["policy-eval", "best-of-n"]


def test_every_stage_in_the_build_order_contributes_a_plan_line(tmp_path: Path) -> None:
    """The dry-run's stage lines come from the stages' own `plan`, one per planned section,
    in build order: the demo (every stage on, two policies, two re-judged sets) gives each
    node of GRAPH its line(s), carrying the section's and the runner's settings."""
    cfg = _broken_demo(tmp_path)
    assert all(n.stage.plan is not None for n in GRAPH), [
        n.name for n in GRAPH if n.stage.plan is None
    ]
    report = preflight(cfg, docker=False)
    lines = [x.removeprefix("  stage  ") for x in report.lines() if x.startswith("  stage  ")]
    expected = [n.name for n in GRAPH for _ in n.calls(cfg)]
    assert [x.split(":", 1)[0] for x in lines] == expected
    assert Counter(expected)["fit-policy"] == len(cfg.policies) == 2
    assert {"mixed", "adv", "mixed-judge", "adv-judge", "dpo", "mixed-dpo"} <= set(expected)
    assert {n.stage.name for n in GRAPH if n.name in expected} == {n.stage.name for n in GRAPH}
    assert all(x.split(": ", 1)[1] for x in lines)  # a line of its own after the name
    by_stage = {x.split(":", 1)[0]: x for x in lines}
    r = cfg.runner
    assert f"{r.judge_shards} shard(s) on {r.kind}" in by_stage["judge"]
    assert f"{r.sample_shards} shard(s) on {r.kind}" in by_stage["sample"]
    assert f"{r.dpo_shards} shard(s) each" in by_stage["dpo-responses"]
    assert f"{len(cfg.dpo.judges)} verifier model(s)" in by_stage["dpo-responses"]
    assert by_stage["assemble"].endswith(", ".join(s.name for s in cfg.assemble.splits))
    assert f"push the hub folder to {cfg.hub.repo_id}" in by_stage["push"]
    assert f"  into   {cfg.work_dir} " in "\n".join(report.lines())


def test_a_stage_the_config_leaves_out_has_no_plan_line(tmp_path: Path) -> None:
    raw = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())
    raw.update(out_dir=str(tmp_path / "out"), tiny_model=None, policies=[], evaluate=None)
    raw["sample"] = {"sources": [{"kind": "reference", "tier": "weak"}]}
    raw["dpo"] = {}
    cfg = RunConfig.model_validate(raw)
    names = [s.split(":", 1)[0] for s in preflight(cfg, docker=False).stages()]
    assert "tiny-model" not in names and "fit-policy" not in names and "evaluate" not in names
    assert names[:2] == ["ingest", "splits"] and names[-1] == "publish"
