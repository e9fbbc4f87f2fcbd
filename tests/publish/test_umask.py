"""Files honour the umask: a Parquet written atomically and a published folder are readable
by other users under a 022 umask (mkstemp / mkdtemp alone would leave 0600 / 0700)."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pyarrow as pa

from pipeline.common.parquet import write_parquet
from pipeline.common.perms import as_if_created, current_umask


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_parquet_and_staged_folders_follow_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        assert current_umask() == 0o022
        out = write_parquet(pa.table({"a": [1, 2]}), tmp_path / "x" / "t.parquet")
        assert _mode(out) == 0o644

        import tempfile

        staged = Path(tempfile.mkdtemp(dir=tmp_path))
        (staged / "sub").mkdir()
        (staged / "sub" / "f.txt").write_text("x")
        os.chmod(staged / "sub" / "f.txt", 0o600)
        assert _mode(staged) == 0o700
        as_if_created(staged)
        assert _mode(staged) == 0o755 and _mode(staged / "sub") == 0o755
        assert _mode(staged / "sub" / "f.txt") == 0o644

        os.umask(0o077)  # a private umask is honoured too
        out = write_parquet(pa.table({"a": [3]}), tmp_path / "private.parquet")
        assert _mode(out) == 0o600
    finally:
        os.umask(old)


def test_reading_the_umask_does_not_change_it_for_other_threads() -> None:
    old = os.umask(0o027)
    try:
        seen: list[int] = []
        threads = [threading.Thread(target=lambda: seen.append(current_umask())) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert seen == [0o027] * 8 and current_umask() == 0o027
    finally:
        os.umask(old)


def test_the_published_folder_is_readable_by_others_under_022(
    build_dir: Path, tmp_path: Path
) -> None:
    from pipeline.publish.stage import build_hub_folder

    old = os.umask(0o022)
    try:
        hub = tmp_path / "hub"
        build_hub_folder(build_dir, hub)
    finally:
        os.umask(old)
    paths = [hub, *hub.rglob("*")]
    assert any(p.suffix == ".parquet" for p in paths)
    for p in paths:
        want = 0o755 if p.is_dir() else 0o644
        assert _mode(p) == want, (p, oct(_mode(p)))
