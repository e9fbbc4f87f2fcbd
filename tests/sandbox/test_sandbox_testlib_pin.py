"""The image's testlib.h install step (sandbox/image/install_testlib.py), run as the image build
runs it: a real `python3` process on a copy of the image folder (no Docker, no network)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

IMAGE = Path(__file__).resolve().parents[2] / "sandbox" / "image"


def _run(tmp: Path, pin: dict, **env: str) -> subprocess.CompletedProcess:
    folder = tmp / "image"
    folder.mkdir(parents=True)
    shutil.copy(IMAGE / "install_testlib.py", folder)
    (folder / "testlib.json").write_text(json.dumps(pin))
    clean = {k: v for k, v in os.environ.items() if k not in ("FETCH_TESTLIB", "TESTLIB")}
    return subprocess.run(
        [sys.executable, str(folder / "install_testlib.py")],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def test_repository_pin_is_unpinned_or_a_sha256() -> None:
    pin = json.loads((IMAGE / "testlib.json").read_text())
    assert pin["url"].startswith("https://raw.githubusercontent.com/MikeMirzayanov/testlib/")
    assert pin["sha256"] is None or (
        len(pin["sha256"]) == 64 and set(pin["sha256"]) <= set("0123456789abcdef")
    )


def test_dockerfile_path_without_sha256_fails_and_says_how_to_fix(tmp_path: Path) -> None:
    url = "https://example.invalid/testlib.h"  # never fetched: the check comes first
    out = _run(tmp_path, {"url": url, "sha256": None}, FETCH_TESTLIB="1")
    assert out.returncode == 1
    assert "pins no sha256" in out.stderr and url in out.stderr
    assert "ALETHEIA_TESTLIB_H" in out.stderr and "TESTLIB=none" in out.stderr


def test_build_without_testlib_on_request_or_offline(tmp_path: Path) -> None:
    unpinned = {"url": "https://example.invalid/testlib.h", "sha256": None}
    asked = _run(tmp_path / "a", unpinned, FETCH_TESTLIB="1", TESTLIB="none")
    offline = _run(tmp_path / "b", unpinned, FETCH_TESTLIB="0")
    for out in (asked, offline):
        assert out.returncode == 0, out.stderr
        assert "no testlib.h for this image" in out.stderr
