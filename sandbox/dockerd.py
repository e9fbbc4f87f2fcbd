"""Whether the Docker daemon answers, asked in milliseconds, and the docker engine's probe.

docker-py (with requests under it) takes most of a second to import on a busy 2-core machine,
and a command answering "Docker is down" should not wait for it: a local daemon (a `unix://`
DOCKER_HOST, or the default socket) is pinged here with the standard library. Other hosts
(tcp, ssh) are asked through docker-py, as the engine itself asks them.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from sandbox.engines import EngineProbe, EngineUnavailable

DEFAULT_HOST = "unix:///var/run/docker.sock"


def docker_host() -> str:
    return os.environ.get("DOCKER_HOST") or DEFAULT_HOST


def no_docker_message(reason: str) -> str:
    """One line for a Docker engine that does not answer: where it was asked, why, what to do."""
    return (
        f"no Docker engine answers at {docker_host()} ({reason}); start it with "
        "`bash scripts/ensure-docker.sh` (as root it starts dockerd), or judge without Docker "
        "(--engine process)"
    )


def _ping_unix(path: str, timeout_s: float) -> str | None:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout_s)
            s.connect(path)
            s.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            head = s.recv(64)
    except OSError as e:
        return e.strerror or type(e).__name__
    status = head.split(b"\r\n", 1)[0]
    if not status.startswith(b"HTTP/1.") or b" 200" not in status:
        return f"{path} answered {status.decode(errors='replace')!r}, not OK"
    return None


def docker_problem(timeout_s: float = 5) -> str | None:
    """Why the Docker engine cannot be used here (one line), or None when it answers."""
    host = docker_host()
    if host.startswith("unix://"):
        why = _ping_unix(host.removeprefix("unix://"), timeout_s)
        return None if why is None else no_docker_message(why)
    from sandbox.image import ImageError, docker_client

    try:
        docker_client(timeout_s).close()
    except ImageError as e:
        return str(e)
    return None


def probe(image: str | None = None, **_pool_options: Any) -> EngineProbe:
    """`probe_engine("docker", ...)`: the daemon answers, and `image` (or the current definition's
    tag) is there; a missing default image is only a note (the first pool builds it)."""
    why = docker_problem()
    if why:
        raise EngineUnavailable(why)
    from sandbox.image import find_image, image_tag

    tag = image or image_tag()
    if find_image(tag) is not None:
        return EngineProbe("docker")
    if image:
        raise EngineUnavailable(f"sandbox image {tag} is not on this machine; build or pull it")
    note = (
        f"sandbox image {tag} not built yet: the first judging shard builds it "
        "(python -m sandbox image ensure does it now)"
    )
    return EngineProbe("docker", notes=[note])
