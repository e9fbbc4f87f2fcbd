"""Every training config reads what a shipped build config writes (issue #15: configs that chain).

Both sides are loaded with the project's own loaders (TrainConfig.from_yaml and
load_run_config), so a renamed out_dir or a training config left pointing at a folder no
build writes fails here, not hours into a run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.config import load_run_config
from pipeline.train.config import TrainConfig

REPO = Path(__file__).resolve().parents[2]
TRAIN_CONFIGS = sorted((REPO / "configs" / "train").glob("*.yaml"))
BUILD_CONFIGS = sorted((REPO / "configs").glob("*.yaml"))  # the run configs: demo, one-node, full


def _hub_dirs() -> dict[Path, Path]:
    """Each build config's release folder (`<out_dir>/hub`) -> the build config file."""
    return {load_run_config(p).hub_dir: p for p in BUILD_CONFIGS}


def test_the_build_configs_are_there() -> None:
    names = {p.name for p in BUILD_CONFIGS}
    assert {"demo.yaml", "one-node.yaml", "aletheia-full.yaml"} <= names
    assert len(TRAIN_CONFIGS) >= 11


@pytest.mark.parametrize("path", TRAIN_CONFIGS, ids=[p.name for p in TRAIN_CONFIGS])
def test_train_config_data_dir_is_a_build_configs_hub_dir(path: Path) -> None:
    data_dir = TrainConfig.from_yaml(path).data.dir
    hubs = _hub_dirs()
    assert data_dir in hubs, (
        f"{path.name}: data.dir {data_dir} is not <out_dir>/hub of any build config "
        f"({', '.join(f'{b.name}: {h}' for h, b in hubs.items())})"
    )
    # The demo configs say which build in their header; the others name it beside data.dir.
    if not path.name.startswith("demo-"):
        assert f"configs/{hubs[data_dir].name}" in path.read_text(), (
            f"{path.name}: the comment should name the build config that writes {data_dir}"
        )
