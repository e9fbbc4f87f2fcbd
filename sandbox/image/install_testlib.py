"""Put testlib.h into the image at build time (stdlib only; runs inside `docker build`).

Sources, in order: a file the host staged into the build context (image/staged/testlib.h, from
ALETHEIA_TESTLIB_H: the offline path), else the pinned download in testlib.json (the Dockerfile
path, with network; its sha256 must be pinned and must match). Without a staged file, the
Dockerfile path fails while testlib.json's sha256 is null, saying how to fill it in (or to build
with TESTLIB=none, an image without testlib). The offline (debootstrap) path without a staged
file builds an image without testlib: the runner then reports checkers that need it as unusable,
and their problems are quarantined. A download whose hash does not match fails the build.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
DEST = "/opt/aletheia/testlib/testlib.h"
UNPINNED = """\
error: sandbox/image/testlib.json pins no sha256 for testlib.h, so the download cannot be verified.
  Fill it in: download {url}
  check it is the file you mean, and write the output of `sha256sum testlib.h` into "sha256".
  Or give the file itself: ALETHEIA_TESTLIB_H=/path/to/testlib.h python -m sandbox image ensure
  (or `--testlib PATH`), or build without testlib: docker build --build-arg TESTLIB=none ..."""


def main() -> int:
    with open(os.path.join(HERE, "testlib.json")) as f:
        pin = json.load(f)
    staged = os.path.join(HERE, "staged", "testlib.h")
    if os.path.isfile(staged):
        with open(staged, "rb") as f:
            data = f.read()
        origin = "a file given with ALETHEIA_TESTLIB_H"
    elif os.environ.get("FETCH_TESTLIB") == "1" and os.environ.get("TESTLIB") != "none":
        if not pin.get("sha256"):
            print(UNPINNED.format(url=pin.get("url")), file=sys.stderr)
            return 1
        data = urllib.request.urlopen(pin["url"], timeout=60).read()
        if hashlib.sha256(data).hexdigest() != pin["sha256"]:
            print(f"testlib.h from {pin['url']} does not match its pinned sha256", file=sys.stderr)
            return 1
        origin = pin["url"]
    else:
        print("no testlib.h for this image (no staged file, no pinned download)", file=sys.stderr)
        return 0
    os.makedirs(os.path.dirname(DEST), exist_ok=True)
    with open(DEST, "wb") as f:
        f.write(data)
    print(f"testlib.h sha256 {hashlib.sha256(data).hexdigest()} from {origin}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
