"""The release as a stage: PUSH pushes the published folder to the Hub as one atomic commit
and tags it (pipeline/publish/push.py), the graph's last node before the evaluation, run only
when the run config's `hub.push` is on.

Its inputs are the published folder's files (`folder` in its call) and the manifest (the default tag names the
build); its output a record of the push (`push.json` in the work dir: repo, commit, head,
tag, files uploaded / deleted / unchanged). Its marker decides, as every stage's: a folder
pushed before is not pushed again (`aletheia stage push --force` pushes anyway; a push
itself diffs against the remote and commits nothing when nothing changed).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pipeline.common.config import RunnerSection
from pipeline.common.stage import Finished, Keying, ShardContext, Shown, Stage, Stats
from pipeline.publish.hub_checks import check_hub
from pipeline.publish.layout import BuildManifest, default_tag

VERSION = "1"


class PushCall(BaseModel):
    """Where the release goes: the run config's `hub` section, when `hub.push` is on. The
    repo may be unset here: preflight names it (`check_hub`) before anything runs."""

    model_config = ConfigDict(extra="forbid")

    folder: Path  # the published folder (not keyed: its files are the stage's inputs)
    repo_id: str | None = None
    tag: str | None = None  # None: v<pipeline version>-<build id>
    endpoint: str | None = None
    private: bool = False


def _outputs(call: PushCall, out: Path) -> dict[str, Path]:
    return {"push": out}


def _push(ctx: ShardContext[PushCall]) -> Stats:
    from pipeline.publish.push import push_folder  # the Hub client: only when it pushes

    call = ctx.config
    if not call.repo_id:
        raise ValueError("hub.push is true but hub.repo_id is not set")
    manifest = ctx.inputs["manifest"]
    assert isinstance(manifest, Path), "the manifest input is one file"
    tag = call.tag or default_tag(BuildManifest.read(manifest.parent))
    r = push_folder(
        call.folder, call.repo_id, tag=tag, endpoint=call.endpoint, private=call.private
    )
    stats = {
        "repo_id": r.repo_id,
        "commit": r.commit,
        "head": r.head,
        "tag": r.tag,
        "uploaded": len(r.uploaded),
        "deleted": len(r.deleted),
        "unchanged": len(r.unchanged),
    }
    ctx.out.write_text(json.dumps(stats, indent=2) + "\n")
    return stats


def _shown(done: Finished) -> Shown:
    s = done.stats
    what = f"commit `{s['commit']}`" if s.get("commit") else "no change (no new commit)"
    line = f"- pushed to `{s['repo_id']}`: {what}, tag `{s['tag']}`"
    return Shown(lines=(line.removeprefix("- "),), summary=line)


def _plan(call: PushCall, runner: RunnerSection) -> str:
    return f"push the hub folder to {call.repo_id}"


PUSH: Stage[PushCall] = Stage(
    name="push",
    version=VERSION,
    config=PushCall,
    check=check_hub,
    inputs=("hub", "manifest"),
    outputs=_outputs,
    run=_push,
    plan=_plan,
    key=Keying(frozenset({"folder"})),
    tags=("network",),
    shows=_shown,
)
