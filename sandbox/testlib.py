"""testlib.h for testlib-convention checkers: one source for both local engines (stdlib only).

testlib.h is third-party (MIT, Mike Mirzayanov) and never in this repository. The Docker image and
the process engine take the same file, found in this order:

1. a file the user gives: ALETHEIA_TESTLIB_H (or `image ensure --testlib FILE`, which stages it);
2. the file staged for the image build (sandbox/image/staged/testlib.h, git-ignored);
3. the pinned copy (sandbox/image/testlib.json: URL + sha256) downloaded by
   `python -m sandbox testlib fetch` (`make image` runs it) into the cache, re-hashed on use.

`image ensure` stages (3) when neither (1) nor (2) is there, so the image built on a machine
carries the file the process engine there uses, and both judge the same problems alike. Without
any of them (no network to the pin's host and no file given), neither engine has testlib: a
checker that includes it is answered `checker_error` by both, its problem quarantined.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import urllib.request
from pathlib import Path

from sandbox.paths import cache_dir

HERE = Path(__file__).resolve().parent
PIN_FILE = HERE / "image" / "testlib.json"
STAGED = HERE / "image" / "staged" / "testlib.h"
ENV = "ALETHEIA_TESTLIB_H"


class TestlibError(RuntimeError):
    """testlib.h could not be had as asked; one line saying why and what to do."""

    __test__ = False


def pin() -> dict:
    """{"url": ..., "sha256": ...} from sandbox/image/testlib.json."""
    return json.loads(PIN_FILE.read_text())


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cached_path(digest: str | None = None) -> Path:
    """Where the pinned copy is kept (named by its hash: a new pin never reads an old copy)."""
    return cache_dir() / "testlib" / (digest or pin()["sha256"] or "unpinned") / "testlib.h"


def pinned_copy() -> Path | None:
    """The fetched pinned copy, if it is there and still hashes to the pin."""
    want = pin().get("sha256")
    path = cached_path(want)
    if not want or not path.is_file():
        return None
    return path if sha256(path.read_bytes()) == want else None


def find() -> tuple[Path | None, str]:
    """(testlib.h for both engines, where it came from); (None, why none) when there is none."""
    given = os.environ.get(ENV)
    if given:
        path = Path(given).expanduser()
        if not path.is_file():
            raise TestlibError(f"{ENV}={given}: no such file")
        return path, f"{ENV}={given}"
    if STAGED.is_file():
        return STAGED, f"staged for the image ({STAGED})"
    cached = pinned_copy()
    if cached is not None:
        return cached, f"the pinned copy ({cached})"
    return None, (
        "no testlib.h: `python -m sandbox testlib fetch` downloads the pinned copy, or give one "
        f"with {ENV}=/path/to/testlib.h"
    )


def fetch(timeout_s: float = 60) -> Path:
    """Download the pinned testlib.h into the cache, checking its sha256; the cached path.
    Idempotent: a verified copy already there is kept."""
    spec = pin()
    want, url = spec.get("sha256"), spec["url"]
    if not want:
        raise TestlibError(f"{PIN_FILE} pins no sha256 for {url}: the download cannot be checked")
    have = pinned_copy()
    if have is not None:
        return have
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:
            data = resp.read()
    except OSError as e:
        why = getattr(e, "reason", None) or e
        raise TestlibError(
            f"cannot download {url} ({why}); give a copy with {ENV}=/path/to/testlib.h"
        ) from e
    got = sha256(data)
    if got != want:
        raise TestlibError(f"{url} has sha256 {got}, not the pinned {want}: not used")
    path = cached_path(want)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".testlib-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    return path
