"""Push a Hub folder as ONE atomic commit per release, then tag it.

- Atomic: every added, changed and deleted file goes into a single `create_commit`
  (with `parent_commit` = the head we diffed against, so a concurrent push fails
  instead of interleaving). Readers see the old release or the new one, never a mix.
- Refuse before writing: everything that can refuse a release (a missing card, the
  release tag already naming another commit) is checked before the first write, so a
  refused push leaves the remote exactly as it was: no new commit, no moved head.
- Idempotent: the local files are compared with the remote tree first (git blob
  sha1 for regular files, sha256 for LFS/Xet files); an unchanged build makes no
  commit, and the tag is only created if missing.
- Resumable: large files are pre-uploaded in batches (`preupload_lfs_files`) before
  the commit. Uploaded blobs are content-addressed and persist on the server, so a
  push killed mid-way and started again uploads only what is still missing and then
  makes the one commit. (`upload_large_folder` is resumable too but makes many
  commits, which breaks the one-commit-per-release contract.)
- The token comes from the argument or the environment (`HF_TOKEN`); it is handed to
  huggingface_hub and never logged, printed or written anywhere.
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, RepoFile
from huggingface_hub.errors import RevisionNotFoundError
from huggingface_hub.utils.sha import git_hash

from pipeline.publish.layout import list_files

log = logging.getLogger(__name__)

REPO_TYPE = "dataset"
KEEP_REMOTE = frozenset({".gitattributes"})  # managed by the Hub, never deleted by a release
PREUPLOAD_BATCH = 64  # files per pre-upload round; each finished round survives a crash


class ReleaseTagConflict(RuntimeError):
    """The release tag already exists on another commit: release tags are immutable."""


@dataclass
class PushResult:
    repo_id: str
    head: str  # commit the branch points at after the push
    commit: str | None  # the new commit, or None when nothing changed
    tag: str | None
    uploaded: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.commit is not None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _same(local: Path, remote: RepoFile) -> bool:
    if remote.size != local.stat().st_size:
        return False
    if remote.lfs is not None:
        return remote.lfs.sha256 == _sha256(local)
    return remote.blob_id == git_hash(local.read_bytes())


def _remote_files(api: HfApi, repo_id: str, revision: str) -> dict[str, RepoFile]:
    try:
        tree = api.list_repo_tree(repo_id, repo_type=REPO_TYPE, revision=revision, recursive=True)
        return {f.path: f for f in tree if isinstance(f, RepoFile)}
    except RevisionNotFoundError:
        return {}


def plan_push(folder: Path, remote: dict[str, RepoFile]) -> tuple[list[str], list[str], list[str]]:
    """(to upload, to delete, unchanged) repo paths."""
    local = list_files(folder)
    upload, unchanged = [], []
    for path in local:
        r = remote.get(path)
        (unchanged if r is not None and _same(folder / path, r) else upload).append(path)
    delete = sorted(set(remote) - set(local) - KEEP_REMOTE)
    return upload, delete, unchanged


def _existing_tags(api: HfApi, repo_id: str) -> dict[str, str]:
    refs = api.list_repo_refs(repo_id, repo_type=REPO_TYPE)
    return {t.name: t.target_commit for t in refs.tags}


def _check_tag(tag: str, existing: dict[str, str], head: str, will_commit: bool) -> None:
    """Refuse (before any write) a release whose tag already names a different commit.

    With a new commit to make, any existing tag of that name is a conflict: the tag
    could never point at the commit this push is about to create.
    """
    target = existing.get(tag)
    if target is None or (target == head and not will_commit):
        return
    why = "this build differs from it" if target == head else f"the head is {head[:12]}"
    raise ReleaseTagConflict(
        f"tag {tag!r} already points at {target[:12]} and {why}: release tags are "
        "immutable, publish under a new tag (nothing was written)"
    )


def push_folder(
    folder: str | Path,
    repo_id: str,
    *,
    tag: str | None = None,
    endpoint: str | None = None,
    token: str | None = None,
    private: bool = False,
    branch: str = "main",
    commit_message: str | None = None,
) -> PushResult:
    """Make the repo's `branch` hold exactly `folder` (plus .gitattributes), in one commit."""
    folder = Path(folder)
    if not (folder / "README.md").exists():
        raise FileNotFoundError(f"{folder} has no README.md: not a Hub folder made by `publish`")
    token = token if token is not None else os.environ.get("HF_TOKEN")
    api = HfApi(endpoint=endpoint, token=token)
    # A no-op on an existing repo, so it changes nothing a refused push must leave alone.
    api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)

    # 1. Read the remote and decide; raise here if the release must be refused.
    head = api.repo_info(repo_id, repo_type=REPO_TYPE, revision=branch).sha
    upload, delete, unchanged = plan_push(folder, _remote_files(api, repo_id, head))
    will_commit = bool(upload or delete)
    tags = _existing_tags(api, repo_id) if tag else {}
    if tag:
        _check_tag(tag, tags, head, will_commit)
    message = commit_message or f"Release {tag or 'update'}"
    result = PushResult(
        repo_id,
        head=head,
        commit=None,
        tag=tag,
        uploaded=upload,
        deleted=delete,
        unchanged=unchanged,
    )
    # 2. Write: blobs (invisible until committed), the one commit, then the tag.
    if will_commit:
        result.commit = result.head = _commit(
            api, folder, repo_id, branch, head, message, upload, delete
        )
    else:
        log.info("nothing changed on %s@%s: no commit", repo_id, head[:12])
    # The Hub has no commit-and-tag transaction: only a tag created by someone else between
    # the check above and this call can still fail here, after the commit.
    if tag and tag not in tags:
        api.create_tag(
            repo_id, tag=tag, revision=result.head, tag_message=message, repo_type=REPO_TYPE
        )
    return result


def _commit(
    api: HfApi,
    folder: Path,
    repo_id: str,
    branch: str,
    parent: str,
    message: str,
    upload: list[str],
    delete: list[str],
) -> str:
    """Pre-upload the large files in resumable batches, then make the one release commit."""
    additions = [
        CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(folder / p)) for p in upload
    ]
    for start in range(0, len(additions), PREUPLOAD_BATCH):
        batch = additions[start : start + PREUPLOAD_BATCH]
        api.preupload_lfs_files(repo_id, additions=batch, repo_type=REPO_TYPE, revision=branch)
        log.info(
            "pre-uploaded %d/%d file(s)",
            min(start + PREUPLOAD_BATCH, len(additions)),
            len(additions),
        )
    operations = additions + [CommitOperationDelete(path_in_repo=p) for p in delete]
    info = api.create_commit(
        repo_id,
        operations=operations,
        commit_message=message,
        repo_type=REPO_TYPE,
        revision=branch,
        parent_commit=parent,  # a concurrent push fails here instead of interleaving
    )
    log.info("committed %s: %d added/changed, %d deleted", info.oid[:12], len(upload), len(delete))
    return info.oid
