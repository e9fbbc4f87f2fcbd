"""Per-slot cgroups for the process engine: memory, pids and CPU, on cgroup v2 or v1.

    plan = plan_cgroups()                       # once per engine: where slot cgroups can go
    cg = plan.create("aletheia-123-0-ab12", limits)   # one per slot
    ... the slot's first process writes its pid to each of cg.procs_files, then execs bwrap
    cg.kill(); cg.remove()

Where the host delegates them. cgroup v2: slot cgroups go under the nearest cgroup, starting at
our own and walking up, whose `cgroup.subtree_control` has (or can be given) the controllers:
our own when it is delegated to us and holds no processes, else an ancestor (a fresh subtree
beside our own cgroup; as root that is always possible up to the hierarchy's root). cgroup v1
(this machine and CI): one directory per controller hierarchy (memory, pids, cpu), under our own
cgroup of that hierarchy, else its root. Whatever cannot be had is listed in `plan.missing`; the
engine then runs on rlimits alone for it and says so (it is part of the engine's stamp).

The runner reads OOM kills from /sys/fs/cgroup/memory/memory.oom_control (the Docker layout on
v1); the engine binds the slot's own counter there: `memory.oom_control` (v1) or `memory.events`
(v2), both of which carry an `oom_kill N` line.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import signal
import socket
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.slot import pid_alive

CONTROLLERS = ("memory", "pids", "cpu")
PREFIX = "aletheia-sbx-"


def host_tag() -> str:
    """Six hex digits of this host's name: slot cgroups of other hosts (or containers) that
    share a cgroup file system are never taken for stale ones of ours."""
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:6]


def slot_name(slot: int) -> str:
    """aletheia-sbx-<host>-<engine pid>-<slot>-<random>: unique, and says who owns it."""
    return f"{PREFIX}{host_tag()}-{os.getpid()}-{max(slot, 0)}-{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class SlotLimits:
    memory_mb: int = 2048  # the whole slot: the largest per-test limit + tmpfs + compiler room
    pids: int = 192  # > the runner's per-test RLIMIT_NPROC, so the runner can always fork
    cpus: float = 1.0  # CFS quota: one core's worth per slot (as the Docker engine's --cpus 1)


@dataclass
class SlotCgroup:
    dirs: dict[str, Path]  # controller -> the slot's directory in that hierarchy
    version: int
    procs_files: list[str] = field(default_factory=list)

    @property
    def oom_file(self) -> Path | None:
        """The file with this slot's `oom_kill N` counter (bound into the sandbox)."""
        mem = self.dirs.get("memory")
        if mem is None:
            return None
        return mem / ("memory.events" if self.version == 2 else "memory.oom_control")

    def pids(self) -> set[int]:
        found: set[int] = set()
        for d in set(self.dirs.values()):
            with contextlib.suppress(OSError):
                found |= {int(x) for x in (d / "cgroup.procs").read_text().split()}
        return found

    def kill(self) -> None:
        """SIGKILL everything in the slot (cgroup.kill on v2, else each process until none)."""
        for d in set(self.dirs.values()):
            kill_file = d / "cgroup.kill"
            if self.version == 2 and kill_file.exists():
                with contextlib.suppress(OSError):
                    kill_file.write_text("1")
        for _ in range(200):
            left = self.pids()
            if not left:
                return
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self, timeout_s: float = 5.0) -> bool:
        """rmdir the slot's directories (retried while the last processes exit)."""
        end = time.monotonic() + timeout_s
        left = set(self.dirs.values())
        while left:
            for d in list(left):
                try:
                    d.rmdir()
                    left.discard(d)
                except FileNotFoundError:
                    left.discard(d)
                except OSError:
                    pass
            if left and time.monotonic() > end:
                return False
            if left:
                time.sleep(0.02)
        return True


@dataclass
class CgroupPlan:
    version: int  # 2, 1, or 0 (no cgroups usable)
    parents: dict[str, Path]  # controller -> where slot directories are made
    missing: dict[str, str]  # controller -> why it is not enforced

    @property
    def label(self) -> str:
        """For the engine's stamp: cgroup-v1, cgroup-v2, cgroup-v1(memory,pids) or rlimits."""
        have = [c for c in CONTROLLERS if c in self.parents]
        if not have:
            return "rlimits"
        tag = f"cgroup-v{self.version}"
        return tag if len(have) == len(CONTROLLERS) else f"{tag}({','.join(have)})"

    def create(self, name: str, limits: SlotLimits) -> SlotCgroup:
        """Make the slot's directories and write its limits (raises OSError)."""
        dirs: dict[str, Path] = {}
        try:
            for controller, parent in self.parents.items():
                d = parent / name
                if d not in dirs.values():
                    d.mkdir()
                dirs[controller] = d
            cg = SlotCgroup(dirs, self.version)
            _write_limits(cg, limits)
        except OSError:
            SlotCgroup(dirs, self.version).remove(timeout_s=1)
            raise
        cg.procs_files = sorted({str(d / "cgroup.procs") for d in dirs.values()})
        return cg

    def remove_stale(self) -> int:
        """Remove slot cgroups left by engine processes of this host that are gone."""
        removed = 0
        for parent in set(self.parents.values()):
            with contextlib.suppress(OSError):
                for d in parent.iterdir():
                    owner = _owner_pid(d.name)
                    if owner is None or pid_alive(owner):
                        continue
                    cg = SlotCgroup({"x": d}, self.version)
                    cg.kill()
                    removed += cg.remove(timeout_s=1)
        return removed


def _owner_pid(name: str) -> int | None:
    """The engine pid in one of our slot names made on this host, else None."""
    if not name.startswith(f"{PREFIX}{host_tag()}-"):
        return None
    parts = name[len(PREFIX) :].split("-")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _write_limits(cg: SlotCgroup, limits: SlotLimits) -> None:
    mem = limits.memory_mb << 20
    period = 100_000
    quota = int(limits.cpus * period)
    d = cg.dirs
    if cg.version == 2:
        if "memory" in d:
            _write(d["memory"] / "memory.max", str(mem))
            if (d["memory"] / "memory.swap.max").exists():
                _write(d["memory"] / "memory.swap.max", "0")  # memory + swap = memory (as Docker)
        if "pids" in d:
            _write(d["pids"] / "pids.max", str(limits.pids))
        if "cpu" in d:
            _write(d["cpu"] / "cpu.max", f"{quota} {period}")
        return
    if "memory" in d:
        _write(d["memory"] / "memory.limit_in_bytes", str(mem))
        if (d["memory"] / "memory.memsw.limit_in_bytes").exists():
            _write(d["memory"] / "memory.memsw.limit_in_bytes", str(mem))
    if "pids" in d:
        _write(d["pids"] / "pids.max", str(limits.pids))
    if "cpu" in d:
        _write(d["cpu"] / "cpu.cfs_period_us", str(period))
        _write(d["cpu"] / "cpu.cfs_quota_us", str(quota))


# -- finding where slot cgroups can go --------------------------------------------------------


@dataclass(frozen=True)
class _Mount:
    fstype: str  # cgroup or cgroup2
    point: Path
    root: str  # the mount's root inside its hierarchy (a cgroup namespace shows "/")
    options: frozenset[str]


def _mounts(mountinfo: str) -> list[_Mount]:
    out = []
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or len(rest) < 3 or rest[0] not in ("cgroup", "cgroup2"):
            continue
        point = fields[4].replace("\\040", " ")
        out.append(_Mount(rest[0], Path(point), fields[3], frozenset(rest[2].split(","))))
    return out


def _own_cgroups(proc_cgroup: str) -> dict[str, str]:
    """controller (or '' for v2) -> our path in that hierarchy."""
    out: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for c in controllers.split(",") if controllers else [""]:
            out[c] = path
    return out


def _inside(mount: _Mount, path: str) -> Path:
    """Our cgroup `path` (as /proc/self/cgroup shows it) under the mount point."""
    rel = path
    if mount.root not in ("/", "") and rel.startswith(mount.root):
        rel = rel[len(mount.root) :]
    return mount.point / rel.lstrip("/")


def _probe_mkdir(parent: Path) -> str | None:
    """None when a slot directory can be made under `parent`, else why not."""
    probe = parent / f"{PREFIX}{host_tag()}-{os.getpid()}-probe"
    try:
        probe.mkdir()
    except FileExistsError:
        pass
    except OSError as exc:
        return f"cannot create cgroups under {parent}: {exc.strerror}"
    with contextlib.suppress(OSError):
        probe.rmdir()
    return None


def _plan_v1(mounts: list[_Mount], own: dict[str, str]) -> CgroupPlan:
    parents: dict[str, Path] = {}
    missing: dict[str, str] = {}
    for controller in CONTROLLERS:
        mount = next((m for m in mounts if m.fstype == "cgroup" and controller in m.options), None)
        if mount is None:
            missing[controller] = f"no cgroup v1 hierarchy with the {controller} controller"
            continue
        why = ""
        candidates = [_inside(mount, own.get(controller, "/")), mount.point]
        for parent in dict.fromkeys(candidates):
            why = _probe_mkdir(parent) or ""
            if not why:
                parents[controller] = parent
                break
        if controller not in parents:
            missing[controller] = why
    return CgroupPlan(1, parents, missing)


def _controllers(d: Path, name: str) -> set[str]:
    try:
        return set((d / name).read_text().split())
    except OSError:
        return set()


def _plan_v2(mount: _Mount, own: dict[str, str]) -> CgroupPlan:
    start = _inside(mount, own.get("", "/"))
    chain = [start, *[p for p in start.parents if p.is_relative_to(mount.point)]]
    why = f"no cgroup under {start} delegates {', '.join(CONTROLLERS)}"
    for d in chain:
        available = _controllers(d, "cgroup.controllers") & set(CONTROLLERS)
        if not available:
            continue
        enabled = _controllers(d, "cgroup.subtree_control")
        wanted = available - enabled
        if wanted:
            try:
                _write(d / "cgroup.subtree_control", " ".join(f"+{c}" for c in sorted(wanted)))
            except OSError as exc:
                # EBUSY: processes live in d itself (the no-internal-processes rule): go up.
                why = f"cannot enable controllers in {d}: {errno.errorcode.get(exc.errno, exc)}"
                enabled = _controllers(d, "cgroup.subtree_control")
                if not enabled & set(CONTROLLERS):
                    continue
            enabled = _controllers(d, "cgroup.subtree_control")
        usable = enabled & set(CONTROLLERS)
        if not usable:
            continue
        problem = _probe_mkdir(d)
        if problem:
            why = problem
            continue
        missing = {c: f"not delegated to {d}" for c in CONTROLLERS if c not in usable}
        return CgroupPlan(2, {c: d for c in CONTROLLERS if c in usable}, missing)
    return CgroupPlan(2, {}, {c: why for c in CONTROLLERS})


def plan_cgroups(
    mountinfo: str | None = None, proc_cgroup: str | None = None, disable: bool = False
) -> CgroupPlan:
    """Where this host lets us put slot cgroups (v1 controllers win on hybrid hosts)."""
    if disable:
        return CgroupPlan(0, {}, {c: "cgroups disabled by the caller" for c in CONTROLLERS})
    try:
        mountinfo = mountinfo if mountinfo is not None else Path("/proc/self/mountinfo").read_text()
        proc_cgroup = (
            proc_cgroup if proc_cgroup is not None else Path("/proc/self/cgroup").read_text()
        )
    except OSError as exc:
        return CgroupPlan(0, {}, {c: f"cannot read cgroup state: {exc}" for c in CONTROLLERS})
    mounts = _mounts(mountinfo)
    own = _own_cgroups(proc_cgroup)
    if any(m.fstype == "cgroup" and m.options & set(CONTROLLERS) for m in mounts):
        return _plan_v1(mounts, own)
    v2 = next((m for m in mounts if m.fstype == "cgroup2"), None)
    if v2 is not None:
        return _plan_v2(v2, own)
    return CgroupPlan(0, {}, {c: "no cgroup file system mounted" for c in CONTROLLERS})
