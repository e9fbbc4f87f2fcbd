"""JUDGE's preflight check: what can be known of the judge engine without starting it.

The Docker engine (sandbox.engine docker, when `ctx.docker`): it answers and the sandbox
image exists (or will be built by the first judging shard); every engine: its options
(the http engine's server address)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.stage import CheckContext, Finding

if TYPE_CHECKING:
    from pipeline.judge.config import SandboxSection
    from pipeline.judge.stage import JudgeCall


def check_docker(sandbox: SandboxSection) -> list[Finding]:
    try:
        from sandbox.image import docker_client, find_image, image_tag

        docker_client().ping()
    except Exception as e:  # noqa: BLE001 - any failure means no sandbox
        return [
            Finding(
                "docker",
                f"the Docker engine does not answer ({' '.join(str(e).split())[:200]}); "
                "start it (scripts/ensure-docker.sh) on every judging node",
            )
        ]
    tag = sandbox.image or image_tag()
    if find_image(tag) is not None:
        return []
    if sandbox.image:
        return [Finding("docker", f"sandbox.image {tag} is not on this machine; build or pull it")]
    return [
        Finding(
            "docker",
            f"sandbox image {tag} not built yet: the first judging shard "
            "builds it (python -m sandbox image ensure does it now)",
            fatal=False,
        )
    ]


def check_judge(call: JudgeCall, ctx: CheckContext) -> list[Finding]:
    out: list[Finding] = []
    if ctx.docker and call.sandbox.engine == "docker":  # other engines need no Docker
        out += check_docker(call.sandbox)
    try:
        call.sandbox.engine_options()
    except ValueError as e:
        out.append(Finding("config", str(e)))
    return out
