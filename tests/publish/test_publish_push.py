"""Pushing with the real huggingface_hub client against a local test double of the Hub API
(tests/publish/hub_double.py says why), then reading back with snapshot_download + load_dataset."""

from __future__ import annotations

import logging
from pathlib import Path

import datasets
import pytest
from huggingface_hub import HfApi, snapshot_download
from huggingface_hub.errors import HfHubHTTPError

from pipeline.publish import CONFIG_NAMES, PublishConfig, build_hub_folder, push_folder
from pipeline.publish.layout import list_files
from pipeline.publish.push import ReleaseTagConflict
from schemas.dataset_configs import CONFIG_BY_NAME
from tests.publish.hub_double import HubDouble

REPO = "aletheia-org/aletheia-test"


@pytest.fixture
def hub_dir(build_dir: Path, tmp_path: Path) -> Path:
    build_hub_folder(build_dir, tmp_path / "hub")
    return tmp_path / "hub"


def _commits(hub: HubDouble) -> int:
    return len(hub.repo(REPO).commits)


def test_push_is_one_commit_tagged_and_round_trips(
    hub: HubDouble, hub_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", hub.state.token)  # the token comes from the environment
    result = push_folder(hub_dir, REPO, tag="v0.1.0-b_test", endpoint=hub.endpoint)
    repo = hub.repo(REPO)
    assert _commits(hub) == 2  # the repo's initial commit + ONE release commit
    assert result.commit == repo.branches["main"] == repo.tags["v0.1.0-b_test"]
    assert set(repo.commits[result.commit].files) == set(list_files(hub_dir)) | {".gitattributes"}
    assert hub.state.auth_seen == {True}
    # Parquet went through the LFS protocol, not inline.
    assert repo.commits[result.commit].files["train/train-00000-of-00001.parquet"].lfs_sha256

    snap = Path(
        snapshot_download(
            REPO,
            repo_type="dataset",
            endpoint=hub.endpoint,
            revision="v0.1.0-b_test",
            local_dir=tmp_path / "snap",
        )
    )
    for f in list_files(hub_dir):
        assert (snap / f).read_bytes() == (hub_dir / f).read_bytes(), f
    for name in CONFIG_NAMES:
        ds = datasets.load_dataset(str(snap), name, cache_dir=str(tmp_path / "cache"))
        local = datasets.load_dataset(str(hub_dir), name, cache_dir=str(tmp_path / "cache2"))
        split = CONFIG_BY_NAME[name].split
        assert ds[split].to_list() == local[split].to_list()


def test_repush_of_same_build_makes_no_commit(hub: HubDouble, hub_dir: Path) -> None:
    token = hub.state.token
    first = push_folder(hub_dir, REPO, tag="v1", endpoint=hub.endpoint, token=token)
    puts, seen = len(hub.state.lfs_puts), len(hub.state.requests)
    again = push_folder(hub_dir, REPO, tag="v1", endpoint=hub.endpoint, token=token)
    assert again.commit is None and again.head == first.head
    assert _commits(hub) == 2 and len(hub.state.lfs_puts) == puts
    assert set(again.unchanged) == set(list_files(hub_dir))
    assert not any(m == "POST" and p.endswith("/commit/main") for m, p in hub.state.requests[seen:])


def test_changed_build_is_one_commit_with_deletions(
    hub: HubDouble, build_dir: Path, hub_dir: Path, tmp_path: Path
) -> None:
    token = hub.state.token
    push_folder(hub_dir, REPO, tag="v1", endpoint=hub.endpoint, token=token)
    build_hub_folder(build_dir, hub_dir, PublishConfig(max_shard_bytes=4_000))  # reshard
    result = push_folder(hub_dir, REPO, tag="v2", endpoint=hub.endpoint, token=token)
    assert _commits(hub) == 3
    assert "train/train-00000-of-00001.parquet" in result.deleted
    files = set(hub.repo(REPO).commits[result.commit].files)
    assert files == set(list_files(hub_dir)) | {".gitattributes"}


def test_push_killed_before_commit_resumes_without_reuploading(
    hub: HubDouble, hub_dir: Path
) -> None:
    token = hub.state.token
    hub.state.fail_next_commits = 1  # uploads succeed, then the commit request dies
    with pytest.raises(HfHubHTTPError):
        push_folder(hub_dir, REPO, tag="v1", endpoint=hub.endpoint, token=token)
    assert _commits(hub) == 1  # nothing visible: the release is all or nothing
    uploaded = len(hub.state.lfs_puts)
    assert uploaded > 0
    result = push_folder(hub_dir, REPO, tag="v1", endpoint=hub.endpoint, token=token)
    assert len(hub.state.lfs_puts) == uploaded  # every blob was already there
    assert result.commit and _commits(hub) == 2


def test_release_tag_is_immutable(hub: HubDouble, build_dir: Path, hub_dir: Path) -> None:
    """A refused release leaves the remote exactly as it was: same commits, head and tags."""
    token = hub.state.token
    first = push_folder(hub_dir, REPO, tag="v1", endpoint=hub.endpoint, token=token)
    build_hub_folder(build_dir, hub_dir, PublishConfig(max_shard_bytes=4_000))
    repo = hub.repo(REPO)
    before = (set(repo.commits), dict(repo.branches), dict(repo.tags))
    lfs_puts = len(hub.state.lfs_puts)
    with pytest.raises(ReleaseTagConflict, match="v1.*nothing was written"):
        push_folder(hub_dir, REPO, tag="v1", endpoint=hub.endpoint, token=token)
    assert _commits(hub) == 2  # the initial commit + the v1 release, no more
    assert repo.branches["main"] == first.head == repo.tags["v1"]
    assert (set(repo.commits), dict(repo.branches), dict(repo.tags)) == before
    assert len(hub.state.lfs_puts) == lfs_puts  # not even a blob went up
    # The same build under a fresh tag goes through as one commit.
    second = push_folder(hub_dir, REPO, tag="v2", endpoint=hub.endpoint, token=token)
    assert _commits(hub) == 3 and repo.tags["v2"] == second.commit == repo.branches["main"]


def test_existing_tag_on_an_older_commit_refuses_an_unchanged_build(
    hub: HubDouble, build_dir: Path, hub_dir: Path, tmp_path: Path
) -> None:
    """v1 names the first release; the head has moved on; re-tagging it as v1 is refused."""
    token = hub.state.token
    push_folder(hub_dir, REPO, tag="v1", endpoint=hub.endpoint, token=token)
    build_hub_folder(build_dir, hub_dir, PublishConfig(max_shard_bytes=4_000))
    second = push_folder(hub_dir, REPO, tag="v2", endpoint=hub.endpoint, token=token)
    with pytest.raises(ReleaseTagConflict, match="v1"):
        push_folder(hub_dir, REPO, tag="v1", endpoint=hub.endpoint, token=token)
    repo = hub.repo(REPO)
    assert _commits(hub) == 3 and repo.branches["main"] == second.head


def test_token_never_logged(
    hub: HubDouble,
    hub_dir: Path,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    push_folder(hub_dir, REPO, tag="v1", endpoint=hub.endpoint, token=hub.state.token)
    out, err = capfd.readouterr()
    assert hub.state.token not in caplog.text + out + err
    assert all(
        hub.state.token.encode() not in (hub_dir / f).read_bytes() for f in list_files(hub_dir)
    )


def test_wrong_token_is_rejected(hub: HubDouble, hub_dir: Path) -> None:
    with pytest.raises(HfHubHTTPError):
        push_folder(hub_dir, REPO, tag="v1", endpoint=hub.endpoint, token="hf_wrong")
    api = HfApi(endpoint=hub.endpoint)
    assert not hub.state.repos and api.endpoint == hub.endpoint


def test_cli_publish_and_push_twice(
    hub: HubDouble, build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from aletheia.cli import app

    monkeypatch.setenv("HF_TOKEN", hub.state.token)
    args = ["publish", "--build", str(build_dir), "--hub-dir", str(tmp_path / "hub-cli"),
            "--repo-id", REPO, "--endpoint", hub.endpoint, "--push"]  # fmt: skip
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "pushed aletheia-org/aletheia-test: commit" in first.output
    assert "tag v0.1.0-b_test" in first.output and hub.state.token not in first.output
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and "no change, no new commit" in again.output
    assert _commits(hub) == 2
