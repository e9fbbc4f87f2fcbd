"""PUSH's preflight check: the Hub, when the release is pushed (the push node runs only when
the run config's `hub.push` is on); a publish of an existing build runs it with publish's
(`preflight(..., only=RELEASE)`)."""

from __future__ import annotations

import os
from typing import Any

from pipeline.common.stage import CheckContext, Finding


def check_hub(push: Any, ctx: CheckContext) -> list[Finding]:
    """`push`: PUSH's call (pipeline/publish/release.py PushCall), made from `hub:`."""
    out = []
    repo = push.repo_id
    if not repo or repo.count("/") != 1:
        out.append(
            Finding("hub", f"hub.push is on but hub.repo_id is {repo!r}; set namespace/name")
        )
    if not os.environ.get("HF_TOKEN"):
        out.append(Finding("hub", "hub.push is on but HF_TOKEN is not set in the environment"))
    return out
