"""Where testlib.h comes from: the image's install step (sandbox/image/install_testlib.py), run as
the image build runs it (a real `python3` process on a copy of the image folder, no Docker, no
network), and sandbox/testlib.py, the one source of the process engine and the image built here:
a download of the pin over a real HTTP server on 127.0.0.1, hash-checked."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

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


def test_repository_pin_is_a_sha256() -> None:
    """The pin names a commit and the sha256 of its testlib.h (it was null: the Dockerfile path
    could not fetch it, and nothing else could check a download)."""
    pin = json.loads((IMAGE / "testlib.json").read_text())
    assert pin["url"].startswith("https://raw.githubusercontent.com/MikeMirzayanov/testlib/")
    assert len(pin["url"].split("/")[-2]) == 40  # a commit, not a branch
    assert len(pin["sha256"]) == 64 and set(pin["sha256"]) <= set("0123456789abcdef")


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


class _Files(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A pin to a file served on 127.0.0.1, an empty cache and no file given or staged."""
    from sandbox import testlib

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Files)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    body = b"// a stand-in header: this test checks the download and its hash, not testlib\n"
    _Files.body = body
    pin = tmp_path / "testlib.json"
    url = f"http://127.0.0.1:{server.server_port}/testlib.h"
    pin.write_text(json.dumps({"url": url, "sha256": hashlib.sha256(body).hexdigest()}))
    monkeypatch.setattr(testlib, "PIN_FILE", pin)
    monkeypatch.setattr(testlib, "STAGED", tmp_path / "staged" / "testlib.h")
    monkeypatch.setenv("ALETHEIA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ALETHEIA_TESTLIB_H", raising=False)
    yield testlib, body
    server.shutdown()


def test_fetch_downloads_the_pin_and_checks_its_hash(pinned) -> None:
    testlib, body = pinned
    assert testlib.find()[0] is None and "testlib fetch" in testlib.find()[1]
    path = testlib.fetch()
    assert path.read_bytes() == body and testlib.find() == (path, f"the pinned copy ({path})")
    path.write_bytes(b"tampered")  # a cached copy that no longer hashes to the pin is not used
    assert testlib.find()[0] is None
    _Files.body = b"another file at the pinned address"
    with pytest.raises(testlib.TestlibError, match="not the pinned"):
        testlib.fetch()
    assert testlib.find()[0] is None


def test_a_given_file_comes_first(pinned, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    testlib, _ = pinned
    testlib.fetch()
    given = tmp_path / "mine.h"
    given.write_text("// the user's own copy\n")
    monkeypatch.setenv("ALETHEIA_TESTLIB_H", str(given))
    assert testlib.find()[0] == given
    monkeypatch.setenv("ALETHEIA_TESTLIB_H", str(tmp_path / "missing.h"))
    with pytest.raises(testlib.TestlibError, match="no such file"):
        testlib.find()


@pytest.mark.process
def test_the_process_engine_takes_the_file_the_image_would_stage(
    pinned, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The pinned copy is what `image ensure` stages and what the process engine binds at
    /opt/aletheia/testlib; without any copy the engine says so once (describe, the stamp's
    testlib=none), not in a warning on every start."""
    import logging

    from sandbox import image
    from sandbox.process.engine import ProcessEngine

    testlib, body = pinned
    monkeypatch.setattr(image, "STAGED_TESTLIB", testlib.STAGED)
    caplog.set_level(logging.WARNING, logger="sandbox")
    with ProcessEngine(pool_size=1, selftest=False, pch=False) as engine:
        assert "testlib=none" in engine.stamp and "testlib fetch" in engine.describe()["testlib"]
    assert not [r for r in caplog.records if "testlib" in r.getMessage()], caplog.text
    testlib.fetch()
    assert image.stage_testlib().read_bytes() == body  # the image's build context gets the pin
    with ProcessEngine(pool_size=1, selftest=False, pch=False) as engine:
        assert (engine.host.opt_dir / "testlib" / "testlib.h").read_bytes() == body
        assert "testlib=none" not in engine.stamp  # the file's hash: verdicts keyed by it
        assert engine.describe()["testlib"].startswith("staged for the image")  # the same bytes
