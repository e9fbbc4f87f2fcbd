"""The process engine on this host: what its sandboxes are (namespaces, cgroup limits, seccomp),
what its stamp records, and how it refuses: a host without a toolchain refuses that language per
request; a host where it cannot isolate refuses to start, in one line.

The verdict suites (test_sandbox_verdicts, _store, _hostile) run on this engine too; these are
the things only it has."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from engines_here import child_pythonpath

from sandbox import JudgeRequest, TestCase
from sandbox.process import seccomp
from sandbox.process.cgroups import _mounts, _own_cgroups, _plan_v2, plan_cgroups
from sandbox.process.hostroot import find_bwrap

pytestmark = pytest.mark.process
REPO = Path(__file__).resolve().parents[2]


def _slot(engine):
    return next(s for s in engine._live.values() if s is not None)


# -- the seccomp tables ---------------------------------------------------------------------


def _header_numbers(path: str) -> dict[str, int]:
    text = Path(path).read_text()
    return {m[1]: int(m[2]) for m in re.finditer(r"#define __NR_(\w+)\s+(\d+)", text)}


@pytest.mark.parametrize(
    ("table", "header"),
    [
        (seccomp.X86_64, "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
        (seccomp.AARCH64, "/usr/include/asm-generic/unistd.h"),
    ],
    ids=["x86_64", "aarch64"],
)
def test_seccomp_numbers_match_the_kernel_headers(table, header):
    if not Path(header).exists():
        pytest.skip(f"{header} is not installed (linux-libc-dev)")
    known = _header_numbers(header)
    wrong = {name: (nr, known.get(name)) for name, nr in table.items() if known.get(name) != nr}
    assert not wrong, f"syscall numbers that differ from {header}: {wrong}"


def test_seccomp_refuses_kernel_interfaces(process_engine):
    """What the process engine's filter takes away beyond namespaces and mounts (those are in
    the hostile suite, for both engines): io_uring, bpf, the keyring, perf. (Docker 20.10's
    default profile, the Docker engine's here, still allows io_uring_setup; Docker 25 refuses it.)"""
    if process_engine.seccomp_program is None or platform.machine() != "x86_64":
        pytest.skip("the x86_64 filter is not in use here")
    src = textwrap.dedent("""
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        buf = ctypes.create_string_buffer(256)
        done = []
        for name, nr, args in (("io_uring", 425, (8, buf)), ("bpf", 321, (0, buf, 64)),
                               ("keyctl", 250, (0, -1)), ("perf", 298, (buf, 0, -1, -1, 0)),
                               ("clone3", 435, (buf, 88))):
            if libc.syscall(nr, *args) >= 0 or ctypes.get_errno() not in (1, 38):
                done.append((name, ctypes.get_errno()))
        print(3 if not done else done)
        """)
    req = JudgeRequest(language="python", source=src, tests=[TestCase(output="3\n")])
    [r] = process_engine.judge([req], use_cache=False)
    assert r.verdict == "AC", r.tests[0].stderr_tail


def test_seccomp_program_shape():
    prog = seccomp.program("x86_64")
    assert prog is not None and len(prog) % 8 == 0
    # arch check, the blocked calls (2 instructions each), clone3, x32, clone's flags, allow
    assert len(prog) // 8 == 4 + 2 + 2 + 2 * len(set(seccomp.X86_64.values())) + 5
    assert seccomp.program("sparc64") is None


# -- what a sandbox is ------------------------------------------------------------------------


def test_probe_saw_an_isolated_sandbox(process_engine):
    facts = process_engine.facts
    assert facts["pid"] == 1 and facts["net"] == ["lo"] and facts["usr_writable"] is False
    assert facts["uid"] != 0 and facts["cap_eff"].strip("0") == ""
    if process_engine.seccomp_program is not None:
        assert facts["seccomp"] == "2" and facts["no_new_privs"] == "1"


def test_stamp_names_the_host_toolchains(process_engine):
    """The stamp (in every verdict's cache key) carries the versions the sandbox runs."""
    from sandbox.engines import JudgeEngine

    assert isinstance(process_engine, JudgeEngine)
    stamp = process_engine.stamp
    assert stamp.startswith("process:")
    parts = dict(p.split("=", 1) for p in stamp[len("process:") :].split(";"))
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    want = subprocess.run(
        [python, "-c", "import sys; print(sys.version.split()[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert parts["python"] == want
    if shutil.which("g++"):
        gxx = subprocess.run(
            ["g++", "-dumpfullversion"], capture_output=True, text=True, check=True
        )
        assert parts["cpp"] == gxx.stdout.strip()  # keyed by language (runner/languages/)
    assert parts["limits"] == process_engine.cgroup_plan.label
    req = JudgeRequest(language="python", source="print(1)", tests=[TestCase(output="1")])
    [r] = process_engine.judge([req], use_cache=False)
    assert r.verdict == "AC" and r.image == stamp
    assert r.cache_key == req.cache_key(stamp) != req.cache_key("sha256:any-docker-image")


def test_slot_cgroup_holds_the_limits(process_engine):
    plan = process_engine.cgroup_plan
    if not plan.parents:
        pytest.skip(f"this host delegates no cgroup: {plan.missing}")
    slot = _slot(process_engine)
    dirs = slot.cgroup.dirs
    assert slot.runner_pid in slot.cgroup.pids()
    mem = 2048 << 20
    if plan.version == 1:
        if "memory" in dirs:
            assert int((dirs["memory"] / "memory.limit_in_bytes").read_text()) == mem
        if "cpu" in dirs:
            assert int((dirs["cpu"] / "cpu.cfs_quota_us").read_text()) == 100_000
    else:
        if "memory" in dirs:
            assert int((dirs["memory"] / "memory.max").read_text()) == mem
        if "cpu" in dirs:
            assert (dirs["cpu"] / "cpu.max").read_text().split() == ["100000", "100000"]
    if "pids" in dirs:
        assert int((dirs["pids"] / "pids.max").read_text()) == 192


def test_oom_kill_in_the_slot_is_counted_and_mle():
    """A child over the slot's memory (a 400 MB slot; the child stays within its 1 GB RLIMIT_AS)
    meets the slot cgroup's OOM killer; its parent then exits 1. Only the slot's OOM counter,
    bound where the runner reads it, can make that MLE rather than RE."""
    from sandbox.engines import open_engine

    src = textwrap.dedent("""
        import os, sys
        if os.fork() == 0:
            x = bytearray(600 * 2**20)
            for i in range(0, len(x), 4096):
                x[i] = 1
            os._exit(0)
        sys.exit(1 if os.WIFSIGNALED(os.wait()[1]) else 0)
        """)
    req = JudgeRequest(
        language="python",
        source=src,
        tests=[TestCase(input="", output="")],
        time_limit_s=5,
        memory_limit_mb=1024,
    )
    with open_engine("process", pool_size=1, cache=False, selftest=False, slot_memory_mb=400) as e:
        if "memory" not in e.cgroup_plan.parents:
            pytest.skip("no memory cgroup on this host")
        oom = _slot(e).cgroup.oom_file
        before = _oom_kills(oom)
        [r] = e.judge([req], use_cache=False)
        assert _oom_kills(oom) > before
    assert r.verdict == "MLE", r


def _oom_kills(path: Path) -> int:
    for line in path.read_text().splitlines():
        if line.startswith("oom_kill "):
            return int(line.split()[1])
    return 0


def test_precompiled_header_is_used_in_the_sandbox(process_engine):
    """g++ inside a sandbox finds the .gch the engine built for the runner's exact flags."""
    if process_engine.layout.pch is None:
        pytest.skip("no precompiled header on this host: " + "; ".join(process_engine.notes))
    script = (
        "cd /tmp && printf '#include <bits/stdc++.h>\\nint main(){}\\n' > a.cpp && "
        "g++ -std=c++17 -O2 -pipe -H -Winvalid-pch a.cpp -o a 2>&1 | head -3"
    )
    out = process_engine.run_oneshot(["sh", "-c", script])
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("!") and ".gch" in out.stdout.splitlines()[0], out.stdout


def test_closed_engine_removes_its_cgroups():
    from sandbox.engines import open_engine

    engine = open_engine("process", pool_size=2, cache=False, selftest=False)
    dirs = [d for s in engine._live.values() if s and s.cgroup for d in s.cgroup.dirs.values()]
    engine.close()
    assert not [d for d in dirs if d.exists()]


# -- refusals ---------------------------------------------------------------------------------


def _outer_bwrap(*extra: str) -> list[str]:
    """A real host without something: the whole file system, with `extra` mounts over it."""
    return [str(find_bwrap()), "--dev-bind", "/", "/", *extra, "--"]


def _cli(prefix: list[str], *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "sandbox", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": child_pythonpath(REPO), **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="hides the JVM with a mount: needs root")
def test_a_missing_toolchain_refuses_its_language_per_request(tmp_path):
    """As on the GPU machine (no Java): the engine starts, says which language it cannot run,
    judges the others, and answers each request in the missing one SE with the reason."""
    if not Path("/usr/lib/jvm").is_dir():
        pytest.skip("no JVM on this host to hide")
    no_java = _outer_bwrap("--tmpfs", "/usr/lib/jvm")
    st = _cli(no_java, "selftest", "--engine", "process")
    assert st.returncode == 1, st.stderr
    report = json.loads(st.stdout)
    assert report["versions"]["java"] == "none" and "java=none" in report["stamp"]
    assert "not found in the sandbox's PATH" in report["unavailable"]["java"]
    assert report["selftest"]["languages"]["python"]["ok"]
    assert "warning: java is not available" in st.stderr
    src, tests = tmp_path / "Main.java", tmp_path / "t.jsonl"
    src.write_text("class Main { public static void main(String[] a) { System.out.println(3); } }")
    tests.write_text('{"input": "", "output": "3"}\n')
    run = _cli(
        no_java,
        "run",
        "--engine",
        "process",
        "--language",
        "java",
        "--source",
        str(src),
        "--tests",
        str(tests),
        "--no-cache",
    )
    assert run.returncode == 3
    assert json.loads(run.stdout)["verdict"] == "SE"
    assert "java is not available on this host" in run.stderr


def test_no_bwrap_refuses_to_start_in_one_line():
    st = _cli([], "selftest", "--engine", "process", env={"ALETHEIA_BWRAP": "/nonexistent/bwrap"})
    assert st.returncode == 3 and st.stdout == ""
    lines = st.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs bubblewrap" in lines[0], st.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="builds a host without user namespaces as root")
def test_no_user_namespaces_refuses_to_start_in_one_line(tmp_path):
    """A host where user namespaces cannot be created (here: inside a namespace that forbids
    them, as `sysctl user.max_user_namespaces=0` would): the engine refuses, in one line, and
    never runs a candidate."""
    no_userns = [
        str(find_bwrap()),
        "--dev-bind",
        "/",
        "/",
        "--unshare-user",
        "--disable-userns",
        "--uid",
        "0",
        "--",
    ]
    st = _cli(no_userns, "selftest", "--engine", "process")
    assert st.returncode == 3 and st.stdout == "", st.stderr
    lines = [line for line in st.stderr.strip().splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "cannot isolate here" in lines[0], st.stderr


# -- cgroup v2 planning (no cgroup v2 controllers on this machine: see the docstring) ----------


def test_cgroup_v2_plan_walks_up_to_a_delegating_ancestor(tmp_path):
    """A test double of a cgroup v2 tree (plain directories and files), because this machine
    mounts its controllers as cgroup v1 and no real v2 hierarchy with controllers exists here
    (the GPU check script, scripts/gpu_engine_check.sh, exercises the real one). Our cgroup
    holds processes, so its subtree cannot be given controllers (EBUSY on a real kernel; here
    writing its cgroup.subtree_control fails); its parent delegates memory, pids and cpu."""
    root = tmp_path / "cg"
    parent = root / "job"
    own = parent / "step"
    own.mkdir(parents=True)
    for d in (root, parent, own):
        (d / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (root / "cgroup.subtree_control").write_text("cpu memory pids\n")
    (parent / "cgroup.subtree_control").write_text("cpu memory pids\n")
    (own / "cgroup.subtree_control").mkdir()  # unwritable, even for root: as EBUSY would be
    mountinfo = f"40 31 0:38 / {root} rw,relatime - cgroup2 cgroup2 rw\n"
    mount = _mounts(mountinfo)[0]
    plan = _plan_v2(mount, _own_cgroups("0::/job/step\n"))
    assert plan.version == 2 and plan.missing == {}
    assert set(plan.parents.values()) == {parent}
    assert plan.label == "cgroup-v2"


def test_cgroup_plan_parses_this_hosts_hierarchies():
    plan = plan_cgroups()
    mounts = Path("/proc/self/mountinfo").read_text()
    if " - cgroup " in mounts and "memory" in mounts:
        assert plan.version == 1
    assert plan.label in ("rlimits",) or plan.label.startswith(("cgroup-v1", "cgroup-v2"))
    assert plan_cgroups(disable=True).label == "rlimits"


def test_engine_runs_without_cgroups_on_rlimits_alone():
    """cgroups=False (as on a host that delegates none): still isolated, still judging, and the
    stamp says limits=rlimits (so its verdicts never share a cache entry with cgroup ones)."""
    from sandbox.engines import open_engine

    with open_engine("process", pool_size=1, cache=False, selftest=False, cgroups=False) as e:
        assert "limits=rlimits" in e.stamp
        assert _slot(e).cgroup is None
        fork_bomb = JudgeRequest(
            language="python",
            source="import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
            tests=[TestCase(input="", output="")],
            time_limit_s=1,
        )
        [r] = e.judge([fork_bomb], use_cache=False)
        assert r.verdict in ("TLE", "RE")
        [ok] = e.judge(
            [JudgeRequest(language="python", source="print(3)", tests=[TestCase(output="3")])],
            use_cache=False,
        )
        assert ok.verdict == "AC"


def test_machine_is_covered_by_a_seccomp_table():
    """This machine's architecture has a seccomp table (else the engine would say so)."""
    assert platform.machine() in seccomp.ARCHES


# -- the CLI ---------------------------------------------------------------------------------


def test_cli_judge_and_run_on_the_process_engine(tmp_path):
    rows = [
        {"id": "a", "language": "python", "source": "print(sum(map(int, input().split())))",
         "tests": [{"input": "1 2\n", "output": "3\n"}]},
        {"id": "b", "language": "cpp",
         "source": "#include <cstdio>\nint main(){int a,b;scanf(\"%d %d\",&a,&b);printf(\"%d\",a*b);}",
         "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "2 2\n", "output": "4\n"}]},
    ]  # fmt: skip
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = _cli(
        [], "judge", str(inp), str(out), "--engine", "process", "--pool-size", "2", "--no-cache"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(r["id"], r["verdict"], r["passed"]) for r in got] == [("a", "AC", 1), ("b", "WA", 1)]
    # the stamp: each language's toolchain version (runner/languages/), then the engine's parts
    assert all(r["image"].startswith("process:cpp=") and ";python=" in r["image"] for r in got)
    src = tmp_path / "a.py"
    src.write_text("print(3)\n")
    tests = tmp_path / "t.jsonl"
    tests.write_text('{"input": "", "output": "3"}\n')
    run = _cli(
        [], "run", "--engine", "process", "--language", "python", "--source", str(src),
        "--tests", str(tests), "--no-cache",
    )  # fmt: skip
    assert run.returncode == 0 and json.loads(run.stdout)["verdict"] == "AC", run.stderr


def test_cli_http_engine_needs_a_url(tmp_path):
    src, tests = tmp_path / "a.py", tmp_path / "t.jsonl"
    src.write_text("print(3)\n")
    tests.write_text('{"input": "", "output": "3"}\n')
    run = _cli(
        [], "run", "--engine", "http", "--language", "python", "--source", str(src),
        "--tests", str(tests),
    )  # fmt: skip
    assert run.returncode == 2 and "--engine http needs --url" in run.stderr
    bad = _cli([], "run", "--engine", "podman", "--language", "python", "--source", str(src),
               "--tests", str(tests))  # fmt: skip
    assert bad.returncode == 2 and "--engine must be one of docker, process, http" in bad.stderr


def test_killed_slot_mid_batch_is_replaced(process_engine):
    """A slot's runner killed from the host mid-batch (as `docker kill` for a container): its
    candidate is judged again on a fresh sandbox; no SE, the right verdicts."""
    import signal
    import threading
    import time
    import uuid

    nonce = uuid.uuid4().hex
    reqs = [
        JudgeRequest(
            language="python",
            source=f"import time\ntime.sleep(0.4)\nprint(int(input()) + 1)  # {nonce} {i}\n",
            tests=[TestCase(input=f"{i}\n", output=f"{i + (1 if i % 3 else 2)}\n")] * 2,
            time_limit_s=2,
        )
        for i in range(10)
    ]
    want = ["AC" if i % 3 else "WA" for i in range(10)]
    before = {s.name: s.runner_pid for s in process_engine._live.values() if s is not None}
    killed: list[str] = []

    def killer():
        time.sleep(1.0)
        name, pid = next(iter(before.items()))
        os.kill(pid, signal.SIGKILL)
        killed.append(name)

    t = threading.Thread(target=killer)
    t.start()
    results = process_engine.judge(reqs, use_cache=False)
    t.join()
    assert [r.verdict for r in results] == want
    assert killed and killed[0] not in process_engine.slots  # replaced by a fresh sandbox
