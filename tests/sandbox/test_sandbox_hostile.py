"""Hostile programs: each gets a sane verdict, leaves nothing behind, and does not slow the next candidate.

After every hostile candidate a probe runs in the SAME slot (a pool of one) and checks that no
process, file or exhausted resource is left over, that it is still the same slot (the runner
survived), and that it runs about as fast as before. Every test runs on each engine: the Docker
engine (containers) and the process engine (bubblewrap sandboxes on the host).
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
import uuid
from pathlib import Path

import pytest
from engines_here import ENGINE_PARAMS, open_test_engine

from sandbox import JudgeRequest, TestCase
from sandbox.container import OWNER_LABEL, owner_id

SECRET = f"hunter2-{uuid.uuid4().hex}"

PROBE = textwrap.dedent(
    """
    import json, os, socket, sys
    me = os.getpid()
    procs = []
    for p in os.listdir('/proc'):
        if p.isdigit() and int(p) not in (1, me):
            try:
                procs.append(open(f'/proc/{p}/cmdline', 'rb').read().replace(b'\\0', b' ').decode()[:80])
            except OSError:
                procs.append(p)
    def ls(d):
        try:
            return sorted(os.listdir(d))
        except OSError as e:
            return [repr(e)]
    st = os.statvfs('/work'); tt = os.statvfs('/tmp')
    report = {
        'host': socket.gethostname(),
        'procs': procs,
        'cwd': ls('.'),
        'tmp': ls('/tmp'),
        'io': [x for x in ls('/work/io') if x != 'stdin'],
        'work_free_mb': st.f_bavail * st.f_frsize // 2**20,
        'tmp_free_mb': tt.f_bavail * tt.f_frsize // 2**20,
    }
    sys.stderr.write(json.dumps(report) + '\\n')
    clean = not procs and not report['cwd'] and not report['tmp'] and not report['io'] \\
        and report['work_free_mb'] > 200 and report['tmp_free_mb'] > 50
    print('CLEAN' if clean else 'DIRTY')
    """
)


def _probe() -> JudgeRequest:
    return JudgeRequest(
        language="python",
        source=PROBE + f"# {uuid.uuid4()}\n",
        tests=[TestCase(input="", output="CLEAN\n")],
        time_limit_s=5,
    )


@pytest.fixture(scope="module", params=ENGINE_PARAMS)
def one_container(request):
    """A pool of ONE slot, so the probe after a hostile program runs where it ran."""
    os.environ["ALETHEIA_HOSTILE_SECRET"] = (
        SECRET  # in the host's env: must never reach a candidate
    )
    with open_test_engine(request.param, pool_size=1, cache=False, selftest=False) as client:
        [base] = client.judge([_probe()])
        assert base.verdict == "AC", base.tests[0].stderr_tail
        report = json.loads(base.tests[0].stderr_tail)
        yield client, report["host"], base.tests[0].wall_s
    os.environ.pop("ALETHEIA_HOSTILE_SECRET", None)


def _judge_then_probe(one_container, req: JudgeRequest):
    client, host, base_wall = one_container
    result, probe = client.judge([req, _probe()])
    report = json.loads(probe.tests[0].stderr_tail)
    assert probe.verdict == "AC", f"left behind: {report}"
    assert report["host"] == host, "the container was replaced: the runner did not survive"
    assert probe.tests[0].wall_s < max(5 * base_wall, base_wall + 1.0), "next candidate slowed down"
    return result


def py(
    src: str, *, tl: float = 1.0, mem: int = 256, output: str = "3\n", inp: str = "1 2\n"
) -> JudgeRequest:
    return JudgeRequest(
        language="python",
        source=textwrap.dedent(src),
        tests=[TestCase(input=inp, output=output)],
        time_limit_s=tl,
        memory_limit_mb=mem,
        output_limit_mb=8,
    )


def cpp(src: str, *, tl: float = 1.0, output: str = "3\n") -> JudgeRequest:
    return JudgeRequest(
        language="cpp",
        source=textwrap.dedent(src),
        tests=[TestCase(input="1 2\n", output=output)],
        time_limit_s=tl,
        output_limit_mb=8,
    )


HOSTILE: dict[str, tuple[JudgeRequest, set[str]]] = {
    "python-fork-bomb": (
        py(
            "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
        ),
        {"TLE", "RE"},
    ),
    "cpp-fork-bomb": (cpp("#include <unistd.h>\nint main(){for(;;)fork();}\n"), {"TLE", "RE"}),
    "python-memory-bomb": (py("x = []\nwhile True:\n    x.append(bytearray(10**7))\n"), {"MLE"}),
    "cpp-memory-bomb": (
        cpp(
            "#include <cstring>\n#include <cstdlib>\nint main(){for(;;){char*p=(char*)malloc(1<<24);"
            "if(!p)abort();memset(p,1,1<<24);}}\n"
        ),
        {"MLE", "RE"},
    ),
    "forked-memory-bomb": (
        py(
            "import os\nfor _ in range(8):\n    if os.fork() == 0:\n        break\n"
            "x = bytearray(200 * 2**20)\nimport time; time.sleep(3)\n"
        ),
        {"MLE", "TLE", "RE"},
    ),
    "disk-fill-one-file": (
        py("with open('big', 'wb') as f:\n    while True:\n        f.write(b'x' * 2**20)\n"),
        {"OLE", "RE"},
    ),
    "disk-fill-many-files": (
        py(
            "import itertools\nfor i in itertools.count():\n"
            "    open(f'/tmp/f{i}' if i % 2 else f'f{i}', 'wb').write(b'x' * 30 * 2**20)\n"
        ),
        {"RE", "OLE"},
    ),
    "stdout-flood": (py("import sys\nwhile True:\n    sys.stdout.write('x' * 2**16)\n"), {"OLE"}),
    "stderr-flood": (py("import sys\nwhile True:\n    sys.stderr.write('e' * 2**16)\n"), {"OLE"}),
    "invalid-utf8": (
        py(
            "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe\\x80 3\\n')\n"
            "sys.stderr.buffer.write(b'\\xc3\\x28 bad \\xa0\\xa1')\n"
        ),
        {"WA"},
    ),
    "invalid-utf8-crash": (
        py("import sys\nsys.stderr.buffer.write(b'\\xff' * 5000)\nraise SystemExit(3)\n"),
        {"RE"},
    ),
    "sleep": (py("import time\ntime.sleep(100)\n"), {"TLE"}),
    "sigstop-self": (
        py("import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)\nprint(3)\n"),
        {"TLE"},
    ),
    "orphan-background": (
        py(
            "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
            "        time.sleep(30)\n        open('/tmp/late', 'w').write('x')\n    os._exit(0)\n"
            "print(3)\n"
        ),
        {"AC"},
    ),
    "orphan-holding-stdout": (
        py("import os, time\nif os.fork() == 0:\n    time.sleep(30)\n    os._exit(0)\nprint(3)\n"),
        {"AC"},
    ),
    "kill-parent": (
        py(
            "import os, signal\nfor s in (signal.SIGKILL, signal.SIGTERM, signal.SIGSTOP, signal.SIGINT):\n"
            "    try:\n        os.kill(os.getppid(), s)\n    except OSError:\n        pass\nprint(3)\n"
        ),
        {"AC"},
    ),
    "kill-everything": (
        py(
            "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError:\n    pass\n"
            "try:\n    os.kill(1, signal.SIGKILL)\nexcept OSError:\n    pass\nprint(3)\n"
        ),
        {"AC"},
    ),
    "ptrace-runner": (
        py(
            "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "r = libc.ptrace(16, 1, 0, 0)  # PTRACE_ATTACH to the runner\n"
            "try:\n    open('/proc/1/mem', 'rb').read(1)\n    ok = False\nexcept OSError:\n    ok = True\n"
            "print(3 if r != 0 and ok else 0)\n"
        ),
        {"AC"},
    ),
    "env-secrets": (
        py("""
        import glob, os
        found = any('hunter2' in v for v in os.environ.values())
        for path in glob.glob('/proc/*/environ') + ['/proc/1/cmdline']:
            try:
                found |= b'hunter2' in open(path, 'rb').read()
            except OSError:
                pass
        print(0 if found else 3)
        """),
        {"AC"},
    ),
    "write-outside-workdir": (
        py("""
        import os
        targets = ['/etc/passwd', '/opt/aletheia/runner/runner.py', '/usr/bin/python3', '/evil', '/root/x',
                   '/home/x', '/var/evil', '/proc/sys/kernel/hostname', '/sys/fs/cgroup/memory/memory.limit_in_bytes']
        written = []
        for t in targets:
            try:
                with open(t, 'a') as f:
                    f.write('x')
                written.append(t)
            except OSError:
                pass
        print(3 if not written else written)
        """),
        {"AC"},
    ),
    "leave-files": (
        py("""
        import os
        open('left.txt', 'w').write('x'); os.makedirs('d/e', exist_ok=True); os.chmod('d', 0)
        open('/tmp/left', 'w').write('x'); open(os.path.expanduser('~/.bashrc'), 'w').write('x')
        open('/work/io/left', 'w').write('x')
        print(3)
        """),
        {"AC"},
    ),
    "deep-directory-nesting": (
        py(
            "import os\nfor i in range(3000):\n    os.mkdir('d')\n    os.chdir('d')\n"
            "open('f', 'w').write('x')\nos.chmod('.', 0)\nprint(3)\n"
        ),
        {"AC"},
    ),
    "namespace-and-mount-escape": (
        py("""
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        done = []
        for name, flags in (("user", 0x10000000), ("mount", 0x20000), ("net", 0x40000000),
                            ("pid", 0x20000000)):
            if libc.unshare(flags) == 0:
                done.append("unshare-" + name)
        if libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0:
            done.append("mount")
        print(3 if not done else done)
        """),
        {"AC"},
    ),
    "network-interfaces": (
        py(
            "import socket\nprint(' '.join(sorted(n for _, n in socket.if_nameindex())))\n",
            output="lo\n",
        ),
        {"AC"},
    ),
    "python-deep-recursion": (
        py("import sys\nsys.setrecursionlimit(10**7)\ndef f(n):\n    return f(n + 1)\nf(0)\n"),
        {"RE", "MLE", "TLE"},
    ),
    "python-deep-recursion-ok": (
        py(
            "import sys\nsys.setrecursionlimit(10**6)\ndef f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\n"
            "print(f(100000) // 33333)\n"
        ),
        {"AC"},
    ),
    "cpp-deep-recursion-ok": (
        cpp(
            "#include <cstdio>\nint f(int n){volatile int pad[8]; pad[0]=n; return n==0?0:1+f(n-1)+pad[0]*0;}\n"
            'int main(){printf("%d\\n", f(1000000)/333333);}\n'
        ),
        {"AC"},
    ),
    "cpp-infinite-recursion": (
        cpp(
            "int f(int n){volatile int x[16]; x[0]=n; return f(n+1)+x[0];}\nint main(){return f(0);}\n"
        ),
        {"RE", "MLE"},
    ),
    "cpp-include-dev-zero": (cpp('#include "/dev/zero"\nint main(){}\n'), {"CE"}),
    "cpp-preprocessor-bomb": (
        cpp(
            "#define A(x) x x x x\n#define B(x) A(A(A(A(x))))\n#define C(x) B(B(B(B(x))))\n"
            "int main(){ C(C(;)) }\n"
        ),
        {"CE"},
    ),
    "cpp-template-explosion": (
        cpp("""
        template<class A, class B> struct P {};
        template<int N> struct X { using t = P<typename X<N-1>::t, typename X<N-1>::t>; };
        template<> struct X<0> { using t = int; };
        int main() { X<20>::t v; v.nope(); }  // a 2^20-long type name in the diagnostic
        """),
        {"CE"},
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_program(one_container, name):
    req, sane = HOSTILE[name]
    result = _judge_then_probe(one_container, req)
    assert result.verdict in sane, (
        name,
        result.verdict,
        [t.model_dump() for t in result.tests],
        (result.compile_output or "")[-500:],
    )
    for t in result.tests:  # a hostile program never holds the pool longer than its limits
        assert t.wall_s < max(3 * req.time_limit_s, req.time_limit_s + 2) + 1.0
        assert isinstance(t.stderr_tail, str)


def test_compile_cache_cannot_be_tampered_with(one_container):
    client, _, _ = one_container
    good = cpp(
        "#include <bits/stdc++.h>\nint main(){int a,b;std::cin>>a>>b;std::cout<<a+b;}\n// tamper-"
        + uuid.uuid4().hex
        + "\n"
    )
    tamper = py("""
        import os
        n = 0
        for root, dirs, files in os.walk('/work/cache'):
            for f in files:
                p = os.path.join(root, f)
                try:
                    os.chmod(p, 0o700)
                    with open(p, 'w') as fh:
                        fh.write('#!/bin/sh\\necho 0\\n')
                    n += 1
                except OSError:
                    pass
        print(3 if n else 0)
        """)
    first, tampered, again = client.judge([good, tamper, good])
    assert first.verdict == "AC"
    assert tampered.verdict == "AC"  # it did overwrite the cached build...
    assert (
        again.verdict == "AC" and again.compile_cached is False
    )  # ...which was detected and rebuilt


@pytest.mark.parametrize("engine", ENGINE_PARAMS)
def test_closed_pool_leaves_nothing_on_host(engine):
    client = open_test_engine(engine, pool_size=1, cache=False, selftest=False)
    names = client.slots
    [r] = client.judge([HOSTILE["orphan-background"][0]])
    assert r.verdict == "AC" and len(names) == 1
    if engine == "process":
        [slot] = [s for s in client._live.values() if s is not None]
        pids, dirs = {slot.runner_pid, slot.proc.pid}, list(slot.cgroup.dirs.values())
        assert slot.cgroup.pids() and all(d.exists() for d in dirs)
        client.close()
        assert not any(Path(f"/proc/{p}").exists() for p in pids), "a slot process survived"
        assert not any(d.exists() for d in dirs), "the slot's cgroups were left behind"
        return
    client.close()
    out = subprocess.run(
        [
            "docker",
            "ps",
            "-a",
            "--format",
            "{{.Names}}",
            "--filter",
            f"label={OWNER_LABEL}={owner_id()}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert not set(names) & set(out)


def test_limits_reach_the_candidate(one_container):
    """The per-test limits (set by limit-exec between vfork and exec) are the candidate's own:
    time limit 2 s -> RLIMIT_CPU 3/4 s (a backstop: the runner stops a test at 2 s); 256 MB -> address space and stack; output 32 MB -> file
    size; 64 processes; no core dumps; first pick of the OOM killer; the runner is its parent."""
    client, _, _ = one_container
    src = """
        import os
        names = {"Max cpu time": 0, "Max address space": 0, "Max stack size": 0,
                 "Max file size": 0, "Max processes": 0, "Max core file size": 0}
        got = {}
        for line in open('/proc/self/limits'):
            for name in names:
                if line.startswith(name + " "):
                    soft, hard = line[len(name):].split()[:2]
                    got[name] = soft + "/" + hard
        print(*[got[n] for n in names], open('/proc/self/oom_score_adj').read().strip(), os.getppid())
        """
    want = "3/4 268435456/268435456 268435456/268435456 33554432/33554432 64/64 0/0 1000 1\n"
    req = py(src, tl=2.0, output=want).model_copy(update={"output_limit_mb": 32})
    [result] = client.judge([req])
    assert result.verdict == "AC", [t.stderr_tail for t in result.tests]


@pytest.mark.parametrize("lang", ["python", "cpp"])
def test_a_busy_loop_costs_its_time_limit_not_more(one_container, lang):
    """A program spinning past its limit is stopped once its CPU clock passes the limit, not
    at the RLIMIT_CPU backstop a second later: TLE either way, and the demo's TLE tests were a
    third of its judging. One that finishes over the limit on its own is TLE as before."""
    client, _, _ = one_container
    spin = {
        "python": py("while True:\n    pass\n", tl=1.0),
        "cpp": cpp("int main(){volatile unsigned long x=0;for(;;)x++;}\n", tl=1.0),
    }[lang]
    # ~1.4 s of CPU, then the right answer: over a 1.0 s limit, under 2 s (the old kill point).
    slow = py(
        "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.4:\n"
        "    pass\nprint(3)\n",
        tl=1.0,
    )
    spun, over = client.judge([spin, slow])
    assert spun.verdict == "TLE", spun.tests[0].stderr_tail
    assert 1.0 < spun.tests[0].time_s < 1.3, spun.tests[0].time_s  # the backstop: ~2.0
    assert over.verdict == "TLE" and over.tests[0].time_s > 1.0, over.tests[0]
