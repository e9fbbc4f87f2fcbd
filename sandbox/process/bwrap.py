"""The bubblewrap command line of one process-engine sandbox, and the isolation probe.

A sandbox is: new pid, network, mount, ipc, uts and user namespaces (bwrap runs unprivileged: as
root the engine first drops to a random uid, so the candidates' uid owns nothing on the host and
RLIMIT_NPROC applies to it); the host's /usr (and /bin, /lib... as the host lays them out) and a
few toolchain files of /etc bound read-only; a fresh /proc and a minimal /dev; private tmpfs
/work (0700, the runner's) and /tmp; the runner's files at /opt/aletheia (as in the image); the
root remounted read-only; the environment cleared; a seccomp filter; the command as PID 1 (bwrap's
--as-pid-1), so the runner is the namespace's init exactly as in a container.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.process.hostroot import OPT

SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"  # the runner's PATH (runner.ENV)
TOP_LEVEL = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# Toolchain configuration under /etc (the JVM's alternatives and config, Python's site files,
# the dynamic loader's cache). Nothing else of the host's /etc is visible.
ETC = (
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "java*",
    "python3*",
)
RUNNER = ["python3", "-I", "-S", f"{OPT}/runner/runner.py"]
OOM_FILE = "/sys/fs/cgroup/memory/memory.oom_control"  # where the runner looks (runner.OOM_CONTROL)


@dataclass
class SandboxLayout:
    bwrap: Path
    opt_dir: Path
    pch: tuple[Path, Path] | None = None  # (our header dir with the .gch, the host's dir it covers)
    work_tmpfs_mb: int = 384
    tmp_tmpfs_mb: int = 64
    extra_ro_binds: tuple[
        str, ...
    ] = ()  # more host paths a toolchain needs (bound at the same path)
    env: dict[str, str] = field(
        default_factory=lambda: {"PATH": SANDBOX_PATH, "HOME": "/work", "LANG": "C.UTF-8"}
    )


def _etc_entries() -> list[str]:
    out: list[str] = []
    for pattern in ETC:
        out += sorted(glob.glob(f"/etc/{pattern}"))
    return out


def argv(
    layout: SandboxLayout,
    command: list[str],
    *,
    uid: int,
    hostname: str,
    oom_file: Path | None = None,
    seccomp_fd: int | None = None,
    info_fd: int | None = None,
) -> list[str]:
    """The full bwrap command line (bwrap first) running `command` as PID 1 of the sandbox."""
    a = [str(layout.bwrap)]
    a += ["--unshare-user", "--disable-userns", "--uid", str(uid), "--gid", str(uid)]
    a += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    a += ["--unshare-cgroup-try", "--hostname", hostname, "--as-pid-1", "--new-session"]
    a += ["--ro-bind", "/usr", "/usr"]
    for name in TOP_LEVEL:
        host = Path("/") / name
        if host.is_symlink():
            a += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            a += ["--ro-bind", str(host), f"/{name}"]
    for path in _etc_entries():
        a += ["--ro-bind", path, path]
    for path in layout.extra_ro_binds:
        a += ["--ro-bind", path, path]
    if layout.pch is not None:
        ours, theirs = layout.pch
        a += ["--ro-bind", str(ours), str(theirs)]
    a += ["--proc", "/proc", "--dev", "/dev"]
    a += ["--perms", "0700", "--size", str(layout.work_tmpfs_mb << 20), "--tmpfs", "/work"]
    a += ["--perms", "1777", "--size", str(layout.tmp_tmpfs_mb << 20), "--tmpfs", "/tmp"]
    a += ["--ro-bind", str(layout.opt_dir), OPT]
    if oom_file is not None:
        a += ["--ro-bind", str(oom_file), OOM_FILE]
    a += ["--remount-ro", "/", "--chdir", "/work", "--clearenv"]
    for k, v in layout.env.items():
        a += ["--setenv", k, v]
    if seccomp_fd is not None:
        a += ["--seccomp", str(seccomp_fd)]
    if info_fd is not None:
        a += ["--info-fd", str(info_fd)]
    return [*a, "--", *command]


def bwrap_version(bwrap: Path) -> str:
    try:
        out = subprocess.run(
            [str(bwrap), "--version"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except OSError:
        return "unknown"
    return out.split()[-1] if out.split() else "unknown"


# What a sandbox must show from inside, and each language's toolchain version and missing tools
# there (the runner's languages/, read as the runner reads them). Runs as PID 1.
PROBE = r"""
import json, os, shutil, socket, sys
f = {"pid": os.getpid(), "uid": os.getuid(), "hostname": socket.gethostname(),
     "net": sorted(n for _, n in socket.if_nameindex()), "python": sys.version.split()[0]}
status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
f["seccomp"] = status.get("Seccomp", "").strip()
f["no_new_privs"] = status.get("NoNewPrivs", "").strip()
f["cap_eff"] = status.get("CapEff", "").strip()
try:
    open("/usr/.aletheia-probe", "w")
    f["usr_writable"] = True
except OSError:
    f["usr_writable"] = False
sys.path.insert(0, %r)
import languages
langs = languages.load()
f["versions"] = {name: lang.read_version() for name, lang in langs.items()}
f["missing"] = {name: [t for t in lang.tools if not shutil.which(t)] for name, lang in langs.items()}
print(json.dumps(f))
""" % (OPT + "/runner")


def isolation_problems(facts: dict, uid: int, hostname: str) -> list[str]:
    """What the probe saw that a sandbox must not be (empty: isolated)."""
    problems = []
    if facts.get("pid") != 1:
        problems.append(f"not PID 1 of a new pid namespace (pid {facts.get('pid')})")
    if facts.get("uid") != uid or facts.get("uid") == 0:
        problems.append(f"runs as uid {facts.get('uid')}, not the unprivileged uid {uid}")
    if facts.get("net") != ["lo"]:
        problems.append(f"network interfaces {facts.get('net')} (only lo expected)")
    if facts.get("hostname") != hostname:
        problems.append("no private uts namespace")
    if facts.get("usr_writable"):
        problems.append("/usr is writable")
    if facts.get("cap_eff", "0").strip("0"):
        problems.append(f"has capabilities {facts.get('cap_eff')}")
    return problems


def parse_probe(stdout: str) -> dict:
    for line in reversed(stdout.strip().splitlines()):
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            continue
    return {}
