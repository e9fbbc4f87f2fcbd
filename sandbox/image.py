"""The sandbox image: its definition's content hash, and building it when that tag is missing.

Two builders produce the same definition:
  dockerfile  - `docker build sandbox/` from debian:bookworm-slim (needs a registry, or that base image locally)
  debootstrap - debian root fs from debootstrap (cached tar under .cache/sandbox/, keyed by the package
                list + build script), `docker import`ed as the base, then the same Dockerfile on top
                with INSTALL_PACKAGES=0 (no registry needed).
The runner is baked into the image (not mounted), so the image id alone says which runner produced a
verdict, and the verdict cache (keyed by image id) can never serve a stale runner's answers. A
runner-only change rebuilds in seconds: the debootstrap tar and the precompiled-header layer are reused.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Literal

import docker
import docker.errors

from sandbox import testlib
from sandbox.dockerd import no_docker_message
from sandbox.paths import cache_dir

HERE = Path(__file__).resolve().parent
REPO = "aletheia-sandbox"
ROOTFS_REPO = "aletheia-sandbox-rootfs"
SLIM_BASE = "debian:bookworm-slim"
Builder = Literal["auto", "dockerfile", "debootstrap"]


class ImageError(RuntimeError):
    """The image could not be found or built; the message says what to do."""


def _log(msg: str) -> None:
    print(f">> {msg}", file=sys.stderr, flush=True)


def definition_files() -> list[Path]:
    """Everything that defines the image, in a stable order."""
    files = [HERE / "Dockerfile", HERE / ".dockerignore"]
    files += sorted(
        p for p in (HERE / "image").rglob("*") if p.is_file() and "__pycache__" not in p.parts
    )
    files += sorted(
        p
        for p in (HERE / "runner").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )
    return [p for p in files if p.exists()]


def _hash_files(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(str(p.relative_to(HERE)).encode() + b"\0")
        h.update(p.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def image_tag() -> str:
    return f"{REPO}:{_hash_files(definition_files())}"


def rootfs_key() -> str:
    return _hash_files([HERE / "image" / "packages.txt", HERE / "image" / "build-rootfs.sh"])


def docker_client(timeout_s: float = 600) -> docker.DockerClient:
    try:
        client = docker.from_env(timeout=timeout_s)
        client.ping()
        return client
    except docker.errors.DockerException as exc:
        raise ImageError(no_docker_message(_root_cause(exc))) from exc


def _root_cause(exc: BaseException) -> str:
    """The innermost OSError's reason (docker-py wraps it two or three times, partly in args)."""
    seen, todo, found = set(), [exc], None
    while todo:
        e = todo.pop(0)
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, OSError) and e.strerror:
            found = e.strerror
        todo += [e.__cause__, e.__context__, *(a for a in e.args if isinstance(a, BaseException))]
        todo = [t for t in todo if t is not None]
    return found or " ".join(str(exc).split()[:12]) or type(exc).__name__


def find_image(tag: str) -> docker.models.images.Image | None:
    try:
        return docker_client().images.get(tag)
    except docker.errors.ImageNotFound:
        return None


STAGED_TESTLIB = testlib.STAGED


def stage_testlib(path: str | Path | None = None) -> Path | None:
    """The testlib.h the image takes (sandbox/testlib.py, the process engine's too): the file the
    user points to (argument, else ALETHEIA_TESTLIB_H), else the one already staged, else the
    fetched pinned copy; copied into the build context, where it becomes part of the image
    definition (and so of its tag). It stays staged (git-ignored) for later builds."""
    src = path or os.environ.get(testlib.ENV)
    if not src:
        if STAGED_TESTLIB.exists():
            return STAGED_TESTLIB
        src = testlib.pinned_copy()
        if src is None:
            return None
    src = Path(src)
    if not src.is_file():
        raise ImageError(f"testlib.h not found at {src} (ALETHEIA_TESTLIB_H / --testlib)")
    STAGED_TESTLIB.parent.mkdir(exist_ok=True)
    if not STAGED_TESTLIB.exists() or STAGED_TESTLIB.read_bytes() != src.read_bytes():
        STAGED_TESTLIB.write_bytes(src.read_bytes())
    return STAGED_TESTLIB


def ensure_image(
    builder: Builder = "auto", force: bool = False, testlib: str | Path | None = None
) -> str:
    """Return the current definition's tag, building it first if missing. Idempotent."""
    stage_testlib(testlib)
    tag = image_tag()
    if not force and find_image(tag) is not None:
        _log(f"sandbox image {tag} is present")
        return tag
    # Several processes (test workers, a demo) may ask at once: one builds, the others wait for it.
    lock_path = cache_dir() / "build.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as lock:
        if not _try_lock(lock):
            _log(f"another process is building the image; waiting for {lock_path}")
            fcntl.flock(lock, fcntl.LOCK_EX)
        if not force and find_image(tag) is not None:
            _log(f"sandbox image {tag} is present (built by another process)")
            return tag
        return _build(tag, builder)


def _try_lock(f) -> bool:
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _build(tag: str, builder: Builder) -> str:
    client = docker_client()
    if builder == "auto":
        builder = "dockerfile" if _has_image(client, SLIM_BASE) else "debootstrap"
    _log(f"building sandbox image {tag} ({builder})")
    if builder == "dockerfile":
        _docker_build(client, tag, buildargs={})
    else:
        base = ensure_rootfs_image(client)
        _docker_build(client, tag, buildargs={"BASE": base, "INSTALL_PACKAGES": "0"})
    _log(f"sandbox image {tag} is ready")
    return tag


def prune_old_images() -> None:
    """Remove earlier definitions' images (~1 GB each). Not automatic: a running pool of an older
    definition restarts its containers from its image id, so only prune when no such pool runs."""
    client = docker_client()
    _prune_old_images(client, keep=image_tag())


def _prune_old_images(client: docker.DockerClient, keep: str) -> None:
    """Untag / remove every other definition's images; ones used by containers are left alone."""
    base_of_keep = client.images.get(keep).attrs.get("Parent", "")
    for repo in (REPO, ROOTFS_REPO):  # derived images first, then their bases
        for img in client.images.list(name=repo):
            for old in img.tags:
                if old == keep or (
                    repo == ROOTFS_REPO and _is_ancestor(client, img.id, base_of_keep)
                ):
                    continue
                try:
                    client.images.remove(old)
                    _log(f"removed the previous image {old}")
                except docker.errors.APIError:
                    pass  # in use by a running pool, or a base of a kept image


def _is_ancestor(client: docker.DockerClient, image_id: str, descendant_id: str) -> bool:
    seen = 0
    while descendant_id and seen < 64:
        if descendant_id == image_id:
            return True
        try:
            descendant_id = client.images.get(descendant_id).attrs.get("Parent", "")
        except docker.errors.ImageNotFound:
            return False
        seen += 1
    return False


def _has_image(client: docker.DockerClient, ref: str) -> bool:
    try:
        client.images.get(ref)
        return True
    except docker.errors.ImageNotFound:
        return False


def ensure_rootfs_image(client: docker.DockerClient) -> str:
    key = rootfs_key()
    base = f"{ROOTFS_REPO}:{key}"
    if _has_image(client, base):
        _log(f"base {base} is present")
        return base
    tar = cache_dir() / f"rootfs-{key}.tar"
    if not tar.exists():
        tar.parent.mkdir(parents=True, exist_ok=True)
        if os.geteuid() != 0:
            raise ImageError(
                "no registry image to build from, and building the sandbox root fs with debootstrap "
                "needs root: run `python -m sandbox image ensure` as root once (it installs "
                "debootstrap with apt-get if missing), or use --builder dockerfile where "
                f"{SLIM_BASE} can be pulled"
            )
        _log(f"debootstrap root fs -> {tar} (about a minute; cached for the next build)")
        proc = subprocess.run(
            [
                "bash",
                str(HERE / "image" / "build-rootfs.sh"),
                str(HERE / "image" / "packages.txt"),
                str(tar),
            ],
            check=False,
        )
        if proc.returncode != 0 or not tar.exists():
            raise ImageError(
                f"building the root fs failed (exit {proc.returncode}); see the messages above"
            )
        for old in tar.parent.glob("rootfs-*.tar"):  # one cached root fs is enough (~650 MB each)
            if old != tar:
                old.unlink(missing_ok=True)
    _log(f"docker import {tar.name} as {base}")
    # The docker CLI streams a file import reliably (docker-py's chunked upload is refused by 20.10).
    proc = subprocess.run(
        ["docker", "import", str(tar), base], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0 or not _has_image(client, base):
        raise ImageError(f"docker import did not produce {base}: {proc.stderr.strip()[-500:]}")
    return base


def _docker_build(client: docker.DockerClient, tag: str, buildargs: dict[str, str]) -> None:
    try:
        stream = client.api.build(
            path=str(HERE),
            dockerfile="Dockerfile",
            tag=tag,
            buildargs=buildargs,
            rm=True,
            forcerm=True,
            decode=True,
            pull=False,
            labels={"aletheia.sandbox.definition": tag},
        )
        for chunk in stream:
            if "stream" in chunk:
                text = chunk["stream"].rstrip()
                if text:
                    print(f"   {text}", file=sys.stderr, flush=True)
            elif "error" in chunk:
                raise ImageError(f"docker build failed: {chunk['error'].strip()}")
    except docker.errors.APIError as exc:
        raise ImageError(f"docker build failed: {exc}") from exc
    if not _has_image(client, tag):
        raise ImageError(f"docker build finished without producing {tag}")


def image_info(tag: str | None = None) -> dict:
    tag = tag or image_tag()
    img = find_image(tag)
    return {
        "tag": tag,
        "present": img is not None,
        "id": img.id if img else None,
        "size_mb": round(img.attrs["Size"] / 2**20, 1) if img else None,
        "created": img.attrs["Created"] if img else None,
        "rootfs_cache": str(cache_dir() / f"rootfs-{rootfs_key()}.tar"),
        "definition": [str(p.relative_to(HERE)) for p in definition_files()],
    }


__all__ = [
    "ImageError",
    "cache_dir",
    "docker_client",
    "ensure_image",
    "find_image",
    "image_info",
    "image_tag",
]
