"""The documented deploy commands (docs/scale.md, prefect.yaml) against a real local Prefect
server with two process work pools: every profile is deployed, to the pool chosen without
a prompt, and a missing pool is an error rather than a prompt."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.flows.flows_helpers import REPO

PREFECT = str(Path(sys.executable).parent / "prefect")
BUILD_FLOWS = ("build-aletheia-train", "build-aletheia-eval", "publish-aletheia")
PROFILES = {
    "demo": "configs/demo.yaml",
    "one-node": "configs/one-node.yaml",
    "cluster": "configs/aletheia-full.yaml",
}


def _prefect(api: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_DEFAULT_WORK_POOL")}
    environ.update(PREFECT_API_URL=api, ALETHEIA_HOME=str(REPO), PREFECT_CLI_COLORS="false", **env)
    return subprocess.run(
        [PREFECT, *args],
        check=False,
        cwd=REPO,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _deployments(api: str) -> dict[str, tuple[str, dict]]:
    """'flow/deployment' -> (work pool, parameters), read back from the server's API."""
    import httpx

    flows = {f["id"]: f["name"] for f in httpx.post(f"{api}/flows/filter", json={}).json()}
    rows = httpx.post(f"{api}/deployments/filter", json={}).json()
    return {
        f"{flows[d['flow_id']]}/{d['name']}": (d["work_pool_name"], d["parameters"]) for d in rows
    }


# The pools prefect.yaml names for the deployments of other machines (docs/scale.md).
OWN_POOL = {"one-node": "aletheia-one-node", "cluster": "aletheia-build"}


@pytest.mark.slow
def _delete_all_deployments(api: str) -> None:
    """The session's server is shared: other tests leave deployments of their own flows."""
    import httpx

    for d in httpx.post(f"{api}/deployments/filter", json={}).json():
        httpx.delete(f"{api}/deployments/{d['id']}").raise_for_status()


def test_deploy_all_profiles_to_a_chosen_pool(prefect_api: str) -> None:
    _delete_all_deployments(prefect_api)
    for pool in ("aletheia-local", "gpu-box"):
        r = _prefect(prefect_api, "work-pool", "create", pool, "--type", "process", "--overwrite")
        assert r.returncode == 0, r.stdout + r.stderr

    # No pool chosen: an error, not a prompt and not a silent default.
    r = _prefect(prefect_api, "--no-prompt", "deploy", "--all")
    assert r.returncode != 0
    assert "work pool" in (r.stdout + r.stderr).lower()

    # The laptop (scripts/demo.sh): the demo's deployments alone, on its pool. The cluster's
    # were registered here too, in this pool, so the UI offered to run them on the laptop.
    demo = _prefect(
        prefect_api,
        "--no-prompt",
        "deploy",
        "--name",
        "*/demo",
        PREFECT_DEFAULT_WORK_POOL_NAME="aletheia-local",
    )
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    deps = _deployments(prefect_api)
    assert {name.split("/")[1] for name in deps} == {"demo"}, sorted(deps.items())
    assert {pool for pool, _ in deps.values()} == {"aletheia-local"}
    for flow in BUILD_FLOWS:
        assert deps[f"{flow}/demo"][1] == {"config": PROFILES["demo"]}
    assert "evaluate-verifier/demo" in deps and "aletheia-ablation/demo" in deps

    # Every deployment: the other machines' pools must exist, and a missing one is named.
    r = _prefect(
        prefect_api, "--no-prompt", "deploy", "--all", PREFECT_DEFAULT_WORK_POOL_NAME="gpu-box"
    )
    assert r.returncode != 0 and "aletheia-one-node" in r.stdout + r.stderr
    for pool in (*OWN_POOL.values(), "aletheia-gpu"):
        r = _prefect(prefect_api, "work-pool", "create", pool, "--type", "process", "--overwrite")
        assert r.returncode == 0, r.stdout + r.stderr
    r = _prefect(
        prefect_api, "--no-prompt", "deploy", "--all", PREFECT_DEFAULT_WORK_POOL_NAME="gpu-box"
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    deps = _deployments(prefect_api)
    for flow in BUILD_FLOWS:
        for profile, config in PROFILES.items():
            pool, params = deps[f"{flow}/{profile}"]
            assert pool == OWN_POOL.get(profile, "gpu-box"), (flow, profile, pool)
            assert params == {"config": config}
            assert (REPO / config).is_file()
    assert deps["train-verifier/demo"][0] == "gpu-box"
    assert deps["evaluate-verifier/demo"][0] == "gpu-box"
    assert deps["aletheia-ablation/7b"][0] == "aletheia-gpu"

    # One deployment by name: `--pool` is honoured and moves only that one.
    r = _prefect(
        prefect_api,
        "--no-prompt",
        "deploy",
        "--name",
        "build-aletheia-train/cluster",
        "--pool",
        "aletheia-local",
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    deps = _deployments(prefect_api)
    assert deps["build-aletheia-train/cluster"][0] == "aletheia-local"
    assert deps["build-aletheia-train/one-node"][0] == "aletheia-one-node"
