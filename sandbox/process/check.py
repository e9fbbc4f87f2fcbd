"""`python -m sandbox.process.check`: does the process engine work on this host? (For machines
where the test suite may not run: a GPU node, no Docker, no pytest.)

Prints, section by section: the host (kernel, uid, cgroup layout, bwrap), the engine (its stamp,
where its slot cgroups went and the limits read back, seccomp, degradations), the self-test per
language, a few known verdicts in every language the host has (and the refusal, per request, of
one it lacks), a hostile subset (each with a probe in the same sandbox afterwards: nothing left
behind, the runner survived), and an HTTP round trip through `python -m sandbox serve` on
127.0.0.1. Exit 0 when every check passed, 1 otherwise; refusing to start is exit 3, in one line.
"""

from __future__ import annotations

import json
import os
import platform
import secrets
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

from sandbox.models import JudgeRequest, TestCase

FAILED: list[str] = []
ADD = [TestCase(input="1 2\n", output="3\n"), TestCase(input="10 -4\n", output="6\n")]
KNOWN = {
    "python": {
        "AC": "a, b = map(int, input().split())\nprint(a + b)\n",
        "WA": "a, b = map(int, input().split())\nprint(a - b)\n",
        "TLE": "while True:\n    pass\n",
        "MLE": "x = bytearray(1 << 30)\nprint(len(x))\n",
        "RE": "raise ValueError('boom')\n",
        "CE": "def broken(:\n    pass\n",
        "OLE": "import sys\nwhile True:\n    sys.stdout.write('y' * 65536)\n",
    },
    "cpp": {
        "AC": "#include <bits/stdc++.h>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a+b;}\n",
        "WA": "#include <iostream>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a*b;}\n",
        "TLE": "int main(){volatile unsigned long long x=0;for(;;)x++;}\n",
        "MLE": "#include <vector>\n#include <cstdio>\n"
        'int main(){std::vector<char> v(1ull<<30, 1);printf("%d", v[12345]);}\n',
        "RE": "int main(){volatile int *p = nullptr; return *p;}\n",
        "CE": "int main(){ this is not c++ }\n",
    },
    "java": {
        "AC": "import java.util.*;\npublic class Main{public static void main(String[] a){"
        "Scanner s=new Scanner(System.in);System.out.println(s.nextLong()+s.nextLong());}}\n",
        "WA": "import java.util.*;\npublic class Main{public static void main(String[] a){"
        "Scanner s=new Scanner(System.in);System.out.println(s.nextLong()-s.nextLong());}}\n",
    },
}
PROBE = textwrap.dedent("""
    import json, os, socket, sys
    procs = [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid())]
    left = sorted(os.listdir('.')) + sorted(os.listdir('/tmp'))
    sys.stderr.write(json.dumps({'host': socket.gethostname(), 'procs': procs, 'left': left}))
    print('CLEAN' if not procs and not left else 'DIRTY')
    """)
SECRET = f"answer-{uuid.uuid4().hex}"
# name -> (source, stdin, expected stdout, sane verdicts)
HOSTILE = {
    "fork bomb": (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
        "", "", {"TLE", "RE"},
    ),
    "memory bomb": ("x = []\nwhile True:\n    x.append(bytearray(10**7))\n", "", "", {"MLE"}),
    "stdout flood": ("import sys\nwhile True:\n    sys.stdout.write('x' * 2**16)\n", "", "", {"OLE"}),
    "network": (
        "import socket\nprint(' '.join(sorted(n for _, n in socket.if_nameindex())))\n",
        "", "lo\n", {"AC"},
    ),
    "write outside the work dir": (
        ("import os\nw = []\nfor t in ['/etc/passwd', '/opt/aletheia/runner/runner.py', '/usr/x', "
        "'/evil', '/root/x', '/sys/fs/cgroup/memory/memory.oom_control']:\n"
        "    try:\n        open(t, 'a').write('x'); w.append(t)\n    except OSError:\n        pass\n"
        "print('none' if not w else w)\n"),
        "", "none\n", {"AC"},
    ),
    # stdin is the expected output reversed; the program prints it only if it finds it anywhere
    "read the expected output": (
        ("import os, sys\nsecret = sys.stdin.readline().strip()[::-1].encode()\nhits = []\n"
        "for top in ('/work', '/tmp', '/opt', '/proc/1'):\n"
        "    for root, dirs, files in os.walk(top):\n"
        "        if root.startswith('/proc/1/') and root.count('/') > 3:\n            continue\n"
        "        for n in files:\n            try:\n"
        "                if secret in open(os.path.join(root, n), 'rb').read(1 << 22):\n"
        "                    hits.append(n)\n            except OSError:\n                pass\n"
        "print(secret.decode() if hits else 'nothing')\n"),
        SECRET[::-1] + "\n", SECRET + "\n", {"WA"},
    ),
    "kill the runner": (
        ("import os, signal\nfor s in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):\n"
        "    try:\n        os.kill(1, s)\n    except OSError:\n        pass\n"
        "try:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError:\n    pass\nprint(3)\n"),
        "", "3\n", {"AC"},
    ),
    "new namespaces": (
        ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "done = [f for f in (0x10000000, 0x20000, 0x40000000) if libc.unshare(f) == 0]\n"
        "print('none' if not done else done)\n"),
        "", "none\n", {"AC"},
    ),
}  # fmt: skip


def say(title: str) -> None:
    print(f"\n== {title}", flush=True)


def check(name: str, ok: bool, detail: str = "") -> None:
    print(f"  {'ok  ' if ok else 'FAIL'} {name}{(': ' + detail) if detail else ''}", flush=True)
    if not ok:
        FAILED.append(name)


def host_facts() -> None:
    say("host")
    print(f"  kernel {platform.release()} {platform.machine()}; uid {os.geteuid()}; "
          f"python {platform.python_version()}")  # fmt: skip
    print("  /proc/self/cgroup: " + " | ".join(Path("/proc/self/cgroup").read_text().split()))
    mounts = [
        line.split(" - ")[1].split()[0] + " " + line.split()[4]
        for line in Path("/proc/self/mountinfo").read_text().splitlines()
        if " - cgroup" in line
    ]
    print("  cgroup mounts: " + "; ".join(mounts))
    unified = Path("/sys/fs/cgroup/cgroup.controllers")
    if unified.exists():
        print(f"  cgroup v2 controllers at the root: {unified.read_text().strip()}")
    for knob in (
        "/proc/sys/user/max_user_namespaces",
        "/proc/sys/kernel/unprivileged_userns_clone",
    ):
        if Path(knob).exists():
            print(f"  {knob} = {Path(knob).read_text().strip()}")


def engine_facts(engine) -> None:
    say("engine")
    d = engine.describe()
    print(f"  stamp: {d['stamp']}")
    print(f"  bwrap: {d['bwrap']}")
    print(f"  cgroups: v{d['cgroups']['version']} parents {d['cgroups']['parents']}")
    for controller, why in d["cgroups"]["missing"].items():
        print(f"  no {controller} cgroup: {why}")
    for note in d["notes"]:
        print(f"  note: {note}")
    slot = next(s for s in engine._live.values() if s is not None)
    if slot.cgroup is not None:
        for controller, path in slot.cgroup.dirs.items():
            files = {
                "memory": ("memory.max", "memory.limit_in_bytes"),
                "pids": ("pids.max",),
                "cpu": ("cpu.max", "cpu.cfs_quota_us"),
            }[controller]
            for f in files:
                if (path / f).exists():
                    print(f"  slot {controller}: {f} = {(path / f).read_text().strip()}")
        check("the runner is in its slot's cgroup", slot.runner_pid in slot.cgroup.pids())
    check("isolated (probe: pid 1, own uid, only lo, read-only /usr, no capabilities)", True,
          json.dumps({k: engine.facts[k] for k in ("pid", "uid", "net", "seccomp")}))  # fmt: skip


def selftest(engine) -> None:
    say("self-test (the runner's, per language)")
    for lang, entry in (engine.selftest_report or {}).get("languages", {}).items():
        refused = engine.unavailable.get(lang)
        if refused:
            print(f"  --   {lang}: refused here: {refused}")
        else:
            check(lang, bool(entry.get("ok")), f"verdicts {entry.get('verdicts')}")


def verdicts(engine) -> None:
    say("known verdicts")
    cases = [(lang, v) for lang, progs in KNOWN.items() for v in progs]
    reqs = [
        JudgeRequest(
            language=lang, source=KNOWN[lang][v], tests=ADD, time_limit_s=1.0, output_limit_mb=4
        )
        for lang, v in cases
    ]
    t = time.perf_counter()
    results = engine.judge(reqs, use_cache=False)
    print(f"  {len(reqs)} programs in {time.perf_counter() - t:.1f} s")
    for (lang, want), r in zip(cases, results):
        if lang in engine.unavailable:
            check(f"{lang} {want}: refused per request", r.verdict == "SE" and bool(r.error),
                  (r.error or "")[:100])  # fmt: skip
        else:
            check(f"{lang} {want}", r.verdict == want, f"got {r.verdict} {r.error or ''}".strip())


def hostile(engine) -> None:
    say("hostile programs (then a probe in the same sandbox)")
    base = _probe(engine)
    for name, (src, stdin, expected, sane) in HOSTILE.items():
        req = JudgeRequest(language="python", source=src, time_limit_s=1, output_limit_mb=8,
                           tests=[TestCase(input=stdin, output=expected)])  # fmt: skip
        [r] = engine.judge([req], use_cache=False)
        after = _probe(engine)
        clean = after["clean"] and after["host"] == base["host"]
        check(name, r.verdict in sane and clean,
              f"verdict {r.verdict}; after: {'clean, same sandbox' if clean else after}")  # fmt: skip


def _probe(engine) -> dict:
    req = JudgeRequest(language="python", source=PROBE + f"# {uuid.uuid4()}\n",
                       tests=[TestCase(output="CLEAN\n")], time_limit_s=5)  # fmt: skip
    [r] = engine.judge([req], use_cache=False)
    try:
        report = json.loads(r.tests[0].stderr_tail)
    except (IndexError, json.JSONDecodeError):
        report = {"host": None}
    return {**report, "clean": r.verdict == "AC"}


def http_round_trip(stamp: str) -> None:
    say("http: python -m sandbox serve on 127.0.0.1, one batch through it")
    import httpx

    from sandbox.engines import open_engine

    token = secrets.token_hex(16)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "serve", "--engine", "process", "--host", "127.0.0.1",
         "--port", str(port), "--pool-size", "2", "--no-cache"],
        env={**os.environ, "ALETHEIA_SANDBOX_TOKEN": token},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and server.poll() is None:
            try:
                if httpx.get(url + "/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        if server.poll() is not None:
            check("server started", False, (server.stderr.read() or "")[-300:])
            return
        with open_engine("http", url=url, token=token) as http:
            reqs = [
                JudgeRequest(
                    language="python",
                    source=KNOWN["python"][v],
                    tests=ADD,
                    time_limit_s=1.0,
                    output_limit_mb=4,
                )
                for v in ("AC", "WA", "RE")
            ]
            got = [r.verdict for r in http.judge(reqs, use_cache=False)]
            check("verdicts through http", got == ["AC", "WA", "RE"], str(got))
            check("same stamp as the engine", http.stamp == stamp)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()


def main() -> int:
    from sandbox.engines import EngineUnavailable, open_engine
    from sandbox.pool import SandboxError

    host_facts()
    try:
        engine = open_engine("process", pool_size=2, cache=False, selftest=True)
    except (EngineUnavailable, SandboxError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    with engine:
        engine_facts(engine)
        selftest(engine)
        verdicts(engine)
        with open_engine("process", pool_size=1, cache=False, selftest=False) as one:
            hostile(one)
        stamp = engine.stamp
    if "--no-http" not in sys.argv:
        http_round_trip(stamp)
    say("result")
    print("  all checks passed" if not FAILED else f"  FAILED: {', '.join(FAILED)}")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
