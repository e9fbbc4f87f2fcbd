"""Helpers for the flow tests: the small run config built from configs/demo.yaml."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from prefect import flow

REPO = Path(__file__).resolve().parents[2]
# Two train problems and two heldout ones (SplitConfig seed 0, fraction 0.5), whose
# reference solutions give every config at least one row, Hard included.
SMALL_PROBLEMS = ("best-streak", "budget-pairs", "backpack", "friend-groups")


def small_config(
    out_dir: Path, bundled: Path, models_dir: Path, **overrides: Any
) -> dict[str, Any]:
    """configs/demo.yaml shrunk: four problems, Python candidates only, short DPO responses."""
    cfg = yaml.safe_load((REPO / "configs" / "demo.yaml").read_text())
    cfg = copy.deepcopy(cfg)
    cfg["name"] = "flowtest"
    cfg["sources"] = [f"bundled:{bundled}"]
    cfg["out_dir"] = str(out_dir)
    cfg["splits"] = {"heldout_fraction": 0.5, "seed": 0}
    for source in cfg["sample"]["sources"]:
        source["languages"] = ["python"]
        if source["kind"] == "mutant":
            source["per_candidate"] = 2
    # The demo's tiny policies: fitted beside the test's tiny model, briefly, and sampled once.
    policy_dirs = {}
    for fit in cfg.get("policies", []):
        policy_dirs[fit["dir"]] = fit["dir"] = f"{models_dir}-{fit['name']}"
        fit["steps"] = min(fit["steps"], 60)
    for source in cfg["sample"]["sources"]:
        if source["kind"] == "model":
            source["model"] = policy_dirs[source["model"]]
            source["samples_per_problem"] = 1
    cfg["tiny_model"]["dir"] = str(models_dir)
    cfg["assemble"]["tokenizer"] = str(models_dir)  # the caps measured with the tiny tokenizer
    cfg["dpo"]["judges"][0]["model_path"] = str(models_dir)
    cfg["dpo"]["max_tokens"] = 32
    cfg["evaluate"]["model"] = str(models_dir)  # the verifier this build makes, not the demo's
    cfg["runner"] = {
        "kind": "thread",
        "sample_shards": 1,
        "judge_shards": 2,
        "dpo_shards": 2,
        "max_parallel_shards": 1,
    }
    cfg["retry"] = {"retries": 0}
    for k, v in overrides.items():
        cfg[k] = v
    return cfg


def fingerprint(path: Path) -> tuple[int, int, str]:
    """(inode, size, sha256) of a file: equal before and after means the file was neither
    replaced (a new inode) nor rewritten with other bytes; mtime alone is too coarse and
    can be set back."""
    import hashlib

    st = path.stat()
    return st.st_ino, st.st_size, hashlib.sha256(path.read_bytes()).hexdigest()


def run_graph_nodes(cfg: Any, names: list[str], given: dict[str, Any]) -> dict[str, Any]:
    """These nodes of the build graph, through the build flows' Prefect executor, with
    `given` standing for the upstream results they read (in a flow)."""
    from flows.build import walk
    from pipeline import stages

    return walk([stages.GRAPH[n] for n in names], cfg, given)[0]


def given_result(**outputs: str) -> dict[str, Any]:
    """An upstream node's result, as the executor reads it: just its outputs."""
    return {"outputs": outputs, "digest": "", "stats": {}}


@flow(name="dpo-only")
def dpo_flow(config: dict[str, Any], name: str, instances: str) -> dict[str, Any]:
    """The train flow's DPO nodes alone (responses as shards, then the pairs): the pairs'
    result, with the responses' shards and where they ran."""
    from pipeline.config import load_run_config

    node, output = {"dpo": ("assemble", "train"), "mixed_dpo": ("mixed", "mixed")}[name]
    given = {node: given_result(**{output: instances}), "tiny-model": None}
    done = run_graph_nodes(load_run_config(config), [f"{name}-responses", name], given)
    responses, pairs = done[f"{name}-responses"], done[name]
    shards = {k: responses["stats"][k] for k in ("shards", "shards_ran_on")}
    return {**pairs, "stats": {**pairs["stats"], **shards}}
