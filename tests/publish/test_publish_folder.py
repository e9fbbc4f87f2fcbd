"""The local Hub folder: layout, explicit schemas, sharding, determinism, card, and the real
consumer (`datasets.load_dataset`) reading every config."""

from __future__ import annotations

from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
import yaml

from pipeline.publish import CONFIG_NAMES, PublishConfig, build_hub_folder
from pipeline.publish.layout import list_files
from pipeline.publish.stage import MissingConfigError
from schemas.dataset_configs import CONFIG_BY_NAME
from tests.publish.synthetic import TEST_ROWS, rewrite


def _front_matter(card: str) -> dict:
    assert card.startswith("---\n")
    return yaml.safe_load(card.split("---\n")[1])


def test_folder_has_card_and_one_folder_per_config(build_dir: Path, tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    stats = build_hub_folder(build_dir, hub)
    files = list_files(hub)
    assert "README.md" in files
    for name in CONFIG_NAMES:
        shards = [f for f in files if f.startswith(name + "/")]
        assert shards and all(f.endswith(".parquet") for f in shards), name
        # one shard set per split, named after it
        assert {f.split("/")[1].split("-")[0] for f in shards} == set(CONFIG_BY_NAME[name].splits)
        for f in shards:  # written with the config's explicit Arrow schema
            assert pq.read_schema(hub / f).remove_metadata() == CONFIG_BY_NAME[name].schema
        assert stats["rows"][name] > 0
    assert {f for f in files if f.startswith("assets/")} == {
        "assets/list_sizes.png",
        "assets/origins.png",
        "assets/correct_positions.png",
        "assets/languages.png",
        "assets/pass_rates.png",
    }
    meta = _front_matter((hub / "README.md").read_text())
    assert [c["config_name"] for c in meta["configs"]] == list(CONFIG_NAMES)


@pytest.mark.usefixtures("hf_offline_env")
def test_load_dataset_reads_every_config(build_dir: Path, tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    stats = build_hub_folder(build_dir, hub)
    for name in CONFIG_NAMES:
        ds = datasets.load_dataset(str(hub), name, cache_dir=str(tmp_path / "cache"))
        cfg = CONFIG_BY_NAME[name]
        assert list(ds) == list(cfg.splits)
        for split in cfg.splits:
            assert ds[split].num_rows == stats["split_rows"][name][split]
            assert ds[split].column_names == cfg.schema.names
    # train configs: one split; evaluation configs: test (a sample) and full (every row)
    assert stats["split_rows"]["train"] == {"train": stats["rows"]["train"]}
    for name in ("heldout", "strong", "hard"):
        assert stats["split_rows"][name] == {"test": TEST_ROWS, "full": stats["rows"][name]}
        assert TEST_ROWS < stats["rows"][name]
    adv = stats["split_rows"]["adv"]  # built from Heldout's test split: full = test
    assert adv["test"] == adv["full"] == stats["rows"]["adv"]
    one = datasets.load_dataset(str(hub), "heldout", split="test", cache_dir=str(tmp_path / "c"))
    full = datasets.load_dataset(str(hub), "heldout", split="full", cache_dir=str(tmp_path / "c"))
    assert one["instance_id"] == full["instance_id"][:TEST_ROWS]


@pytest.mark.usefixtures("hf_offline_env")
def test_shards_by_size_and_reads_all_rows(build_dir: Path, tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    stats = build_hub_folder(build_dir, hub, PublishConfig(max_shard_bytes=4_000))
    assert stats["shards"]["train"] > 1
    shards = sorted((hub / "train").glob("*.parquet"))
    n = len(shards)
    assert [s.name for s in shards] == [f"train-{i:05d}-of-{n:05d}.parquet" for i in range(n)]
    ds = datasets.load_dataset(str(hub), "train", cache_dir=str(tmp_path / "cache"))
    assert ds["train"].num_rows == stats["rows"]["train"]


def test_same_build_gives_identical_bytes(build_dir: Path, tmp_path: Path) -> None:
    # two folders: the same bytes once the card names the same load target (a repo id;
    # without one it names each folder, see test_card_truth)
    a, b = tmp_path / "a", tmp_path / "b"
    build_hub_folder(build_dir, a, repo_id="someone/aletheia")
    build_hub_folder(build_dir, b, repo_id="someone/aletheia")
    files = list_files(a)
    assert files == list_files(b)
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)


def test_card_says_how_it_was_built_and_hides_secrets(
    build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_env_token_must_not_appear")
    hub = tmp_path / "hub"
    build_hub_folder(build_dir, hub)
    card = (hub / "README.md").read_text()
    for needle in (
        "sha256:feedface",
        "b_test",
        "0.1.0",
        "sample=0",
        "tiny-qwen2",
        "reference:bundled",
        "invariant 1",
        "invariant 2",
        "invariant 6",
        "assets/pass_rates.png",
    ):
        assert needle in card, needle
    run_config = (hub / "details" / "run_config.yaml").read_text()  # linked from the card
    assert "details/run_config.yaml" in card and "<redacted>" in run_config
    assert "max_tokens: 48" in run_config  # a setting that mentions tokens is not a secret
    for f in list_files(hub):  # no file of the release holds a secret
        text = (hub / f).read_bytes()
        for secret in (b"sk-should-not-show", b"hf_nope", b"hf_env_token_must_not_appear"):
            assert secret not in text, (f, secret)


def test_rebuild_replaces_stale_files(build_dir: Path, tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    build_hub_folder(build_dir, hub, PublishConfig(max_shard_bytes=4_000))
    many = len(list((hub / "train").glob("*.parquet")))
    build_hub_folder(build_dir, hub)
    assert many > 1 and len(list((hub / "train").glob("*.parquet"))) == 1


def test_refuses_an_empty_required_config(build_dir: Path, tmp_path: Path) -> None:
    rewrite(build_dir, "hard", lambda rows: [])
    with pytest.raises(MissingConfigError, match="hard"):
        build_hub_folder(build_dir, tmp_path / "hub")
    assert not (tmp_path / "hub").exists()
    partial = PublishConfig(require_configs=[c for c in CONFIG_NAMES if c != "hard"])
    assert build_hub_folder(build_dir, tmp_path / "hub", partial)["rows"]["hard"] == 0


def test_second_publish_of_same_build_is_cached(build_dir: Path, tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    assert build_hub_folder(build_dir, hub)["cached"] is False
    assert build_hub_folder(build_dir, hub)["cached"] is True
