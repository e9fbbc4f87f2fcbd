"""PUBLISH's preflight check: the Hub, when the release is pushed. Its section is the run's
`hub` (PublishCall names the repo the card's load lines use, not whether to push); a
publish of an existing build runs this check alone (`preflight(..., only=("publish",))`)."""

from __future__ import annotations

import os
from typing import Any

from pipeline.common.stage import CheckContext, Finding


def check_hub(hub: Any, ctx: CheckContext) -> list[Finding]:
    """`hub` is the run config's HubSection (pipeline.config sits above publish: Any)."""
    if not hub.push:
        return []
    out = []
    repo = hub.repo_id
    if not repo or repo.count("/") != 1:
        out.append(
            Finding("hub", f"hub.push is on but hub.repo_id is {repo!r}; set namespace/name")
        )
    if not os.environ.get("HF_TOKEN"):
        out.append(Finding("hub", "hub.push is on but HF_TOKEN is not set in the environment"))
    return out
