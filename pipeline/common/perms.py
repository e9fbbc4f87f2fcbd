"""File modes that honour the process umask.

`tempfile.mkstemp` / `mkdtemp` create 0600 files and 0700 folders whatever the umask, so
anything written through them and renamed into place (atomic writes, staged folders) would
stay private: other users and Ray workers under other uids could not read a dataset on a
shared disk. These helpers give such paths the mode a plain `open()` / `mkdir()` would.
"""

from __future__ import annotations

import os
from pathlib import Path


def current_umask() -> int:
    """The process umask, read without changing it (os.umask would race with threads)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)  # no /proc: the classic read-by-setting, restored at once
    os.umask(mask)
    return mask


def as_if_created(path: str | Path) -> None:
    """chmod a temp-created file (0666 & ~umask) or folder, recursively (0777 & ~umask)."""
    path = Path(path)
    mask = current_umask()
    if path.is_dir():
        for root, dirs, files in os.walk(path):
            os.chmod(root, 0o777 & ~mask)
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o777 & ~mask)
            for f in files:
                os.chmod(os.path.join(root, f), 0o666 & ~mask)
    else:
        os.chmod(path, 0o666 & ~mask)
