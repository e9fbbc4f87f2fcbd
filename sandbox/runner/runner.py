"""The persistent in-container runner (stdlib only; PID 1 of its sandbox container).

Protocol: one JSON object per line on stdin, one JSON answer per line on stdout.
  {"op": "ping"}                      -> {"ok": true, "version": ...}
  {"op": "selftest"}                  -> {"ok": bool, "languages": {lang: {ok, verdicts,
                                          compile_output, version}}}
  {"op": "store", "tests_ref": H, "sizes": [[in, out, code], ...]} + the raw bytes
                                      -> {"ok": true, "bytes": n}   (a test set, kept by its hash H;
                                         each test's input, output and code (-1: none) bytes follow
                                         the JSON line, unescaped)
  {"op": "judge", "language", "mode", "source", "tests" | "tests_ref", "time_limit_s",
   "memory_limit_mb", "compare", "output_limit_mb"}
                                      -> {"ok": true, "compile_ok", "compile_output", "compile_cached",
                                          "tests": [{verdict, time_s, wall_s, memory_kb, exit_code,
                                                     stderr_tail}], "healthy": bool,
                                          "checker_error": str (only when the checker is unusable)}
                                      -> {"ok": false, "missing_tests": H}  (H is not stored: send it)
Being PID 1 matters: the kernel ignores SIGKILL/SIGSTOP sent to a namespace's init from
inside it, so a candidate cannot kill its runner, and every orphan is re-parented to us.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import secrets
import signal
import sys
import time
from collections import OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checkers
import compare
import languages
from execute import Limits, Outcome, run_limited, sweep, wipe
from store import StoredTest, TestStore, decode_tests, read_tests

PROTOCOL_VERSION = 3
# One module per language (runner/languages/): adding a language is adding a file there.
LANGS = languages.load()
WORK = os.environ.get("ALETHEIA_WORK", "/work")
CACHE_DIR = os.path.join(WORK, "cache")  # compiled artifacts, keyed by content hash
RUN_DIR = os.path.join(WORK, "run")  # cwd of each test; wiped after each
IO_DIR = os.path.join(WORK, "io")  # stdin / test code / checker files; wiped after each test
TMP_DIR = "/tmp"
MAX_CACHED_BUILDS = 64
COMPILE_MEMORY_MB = 1024
ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": RUN_DIR,
    "TMPDIR": TMP_DIR,
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",  # set iteration order is part of a program's output: keep verdicts reproducible
}
OOM_CONTROL = "/sys/fs/cgroup/memory/memory.oom_control"
# Test sets sent once per container (see store.py); the pool's container memory leaves room for it.
STORE = TestStore(int(os.environ.get("ALETHEIA_STORE_MB", "256")) << 20)
INLINE = "inline"  # the store key of a request's inline tests

_builds: OrderedDict[str, tuple[bool, str, str, str]] = (
    OrderedDict()
)  # key -> (ok, output, dir, digest)


def _no_dump() -> None:
    """Same uid as the candidates: non-dumpable stops ptrace and /proc/1/{mem,fd,environ} access."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except OSError:
        pass


def _oom_kills() -> int | None:
    try:
        with open(OOM_CONTROL) as f:
            for line in f:
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _digest(path: str) -> str:
    h = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(path)):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(root, name)
            h.update(full.encode())
            with open(full, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def _compile_limits(lang) -> Limits:
    return Limits(
        cpu_s=10,
        wall_s=30,
        address_space_mb=lang.address_space_mb(COMPILE_MEMORY_MB),
        output_bytes=1 << 20,
        file_bytes=256 << 20,
        nproc=128,
    )


def _limited(argv, *, cwd, limits, merge_stderr=False, **kw) -> Outcome:
    try:
        return run_limited(argv, cwd=cwd, env=ENV, limits=limits, merge_stderr=merge_stderr, **kw)
    finally:
        sweep()


def build(lang, source: str, extra_flags: tuple[str, ...] = ()) -> tuple[bool, str, str, bool]:
    """Compile once per (language, flags, source); verify cached artifacts before reuse (the
    candidates share our uid and could rewrite them)."""
    key = hashlib.sha256(
        json.dumps([PROTOCOL_VERSION, lang.key(), list(extra_flags), source]).encode()
    ).hexdigest()
    hit = _builds.get(key)
    if hit is not None:
        ok, output, path, digest = hit
        if not ok or _digest_ok(path, digest):
            _builds.move_to_end(key)
            return ok, output, path, True
        _evict(key)
    path = os.path.join(CACHE_DIR, key[:32])
    if os.path.exists(path):
        _chmod_wipe(path)
    os.makedirs(path)
    ok, output = lang.build(source, path, _limited, _compile_limits(lang), extra_flags)
    _cleanup_after_test()
    if not ok:
        _chmod_wipe(path)
    _builds[key] = (ok, output, path, _digest(path) if ok else "")
    while len(_builds) > MAX_CACHED_BUILDS:
        _evict(next(iter(_builds)))
    return ok, output, path, False


def _digest_ok(path: str, digest: str) -> bool:
    try:
        return _digest(path) == digest
    except OSError:
        return False


def _evict(key: str) -> None:
    _, _, path, _ = _builds.pop(key)
    _chmod_wipe(path)


def _chmod_wipe(path: str) -> None:
    if os.path.isdir(path):
        os.chmod(path, 0o700)
        wipe(path)
        os.rmdir(path)


def _cleanup_after_test() -> bool:
    clean = sweep()
    for d in (RUN_DIR, IO_DIR, TMP_DIR):
        try:
            wipe(d)
        except Exception:  # noqa: BLE001 - anything left means: replace this container
            clean = False
    os.makedirs(RUN_DIR, exist_ok=True)
    os.makedirs(IO_DIR, exist_ok=True)
    return clean


def _write(path: str, data: str | bytes) -> None:
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    with open(path, "wb") as f:
        f.write(data)


def wall_limit(time_limit_s: float) -> float:
    """Wall-clock cap per test: generous (a loaded host starves runnable programs), but finite, so a
    sleeping or self-stopped program is still killed. The time limit itself is on CPU time."""
    return max(3 * time_limit_s, time_limit_s + 2.0)


def _test_limits(lang, time_limit_s: float, memory_mb: int, output_mb: int) -> Limits:
    return Limits(
        cpu_s=time_limit_s,
        wall_s=wall_limit(time_limit_s),
        address_space_mb=lang.address_space_mb(memory_mb),
        output_bytes=output_mb << 20,
        file_bytes=min(output_mb, 64) << 20,
        nproc=64,
        stop_at_cpu_s=True,
    )


def run_test(lang, build_dir: str, req: dict, test: StoredTest) -> dict:
    mode = req.get("mode", "stdio")
    tl = float(req.get("time_limit_s", 2.0))
    mem = int(req.get("memory_limit_mb", 256))
    limits = _test_limits(lang, tl, mem, int(req.get("output_limit_mb", 32)))
    argv = lang.command(build_dir, mem, mode, os.path.join(IO_DIR, "test.py"))
    stdin_path = os.path.join(IO_DIR, "stdin")
    pass_fds: tuple[int, ...] = ()
    token = b""
    read_fd = -1
    if mode == "function":
        _write(os.path.join(IO_DIR, "test.py"), test.code or "")
        _write(stdin_path, "")
        token = secrets.token_hex(16).encode()
        read_fd, write_fd = os.pipe()
        os.write(write_fd, token)
        os.close(write_fd)
        argv = argv + [str(read_fd)]
        pass_fds = (read_fd,)
    else:
        stdin_path = test.input_path  # the sealed memfd itself, opened read-only
    ooms_before = _oom_kills()
    try:
        out = run_limited(
            argv, cwd=RUN_DIR, env=ENV, limits=limits, stdin_path=stdin_path, pass_fds=pass_fds
        )
    finally:
        if read_fd >= 0:
            os.close(read_fd)
    oom_killed = _oom_kills() != ooms_before if ooms_before is not None else False
    verdict = _classify(lang, req, test, out, tl, mem, token, oom_killed)
    return {
        "verdict": verdict,
        "time_s": round(out.cpu_s, 4),
        "wall_s": round(out.wall_s, 4),
        "memory_kb": out.max_rss_kb,
        "exit_code": out.exit_code,
        "stderr_tail": out.stderr_tail.decode("utf-8", "replace")[-1000:],
    }


def _classify(
    lang,
    req,
    test: StoredTest,
    out: Outcome,
    tl: float,
    mem: int,
    token: bytes,
    oom_killed: bool,
) -> str:
    code = out.exit_code
    if out.output_exceeded or code == -signal.SIGXFSZ:
        return "OLE"
    if out.timed_out or out.cpu_exceeded or out.cpu_s > tl or code == -signal.SIGXCPU:
        return "TLE"
    if code != 0 and (
        oom_killed
        or lang.is_memory_error(out.stderr_tail)
        or (code == -signal.SIGKILL and not out.killed_by_us)
    ):
        return "MLE"
    if out.max_rss_kb > mem * 1024 and lang.address_space_mb(mem) is not None:
        return "MLE"
    if req.get("mode", "stdio") == "function":
        if code == 0 and out.stdout.endswith(b"\n" + token + b"\n"):
            return "AC"
        if code == 0:
            return "WA"  # exited cleanly before the test code finished
        last = out.stderr_tail.strip().rsplit(b"\n", 1)[-1]
        return "WA" if last.startswith(b"AssertionError") else "RE"
    if code != 0:
        return "RE"
    return _compare(req, test, out.stdout)


def _compare(req: dict, test: StoredTest, actual: bytes) -> str:
    spec = req.get("compare") or {}
    mode = spec.get("mode", "tokens")
    expected = test.output()
    if mode == "tokens":
        return "AC" if compare.tokens_equal(actual, expected) else "WA"
    if mode == "exact":
        return "AC" if compare.exact_equal(actual, expected) else "WA"
    if mode == "float":
        ok = compare.floats_equal(actual, expected, spec.get("abs_tol"), spec.get("rel_tol"))
        return "AC" if ok else "WA"
    if mode in ("checker", "testlib"):
        return _run_checker(req, test, actual)
    return "SE"


def _run_checker(req: dict, test: StoredTest, actual: bytes) -> str:
    """Run a checker on files written only now, when the candidate has exited and been swept (it
    ran under our uid: the checker itself is written afresh, or a compiled one re-verified)."""
    sweep()
    wipe(RUN_DIR)
    spec = req["compare"]
    mode = spec["mode"]
    if mode == "checker":
        checker = os.path.join(IO_DIR, "checker.py")
        _write(checker, spec["checker"])
    else:
        checker, error = _prepare_checker(req)
        if error or checker is None:
            return "SE"
    paths = {n: os.path.join(IO_DIR, n) for n in ("input", "answer", "output")}
    _write(paths["input"], test.input())
    _write(paths["answer"], test.output())
    _write(paths["output"], actual)
    if mode == "checker":  # the Python checker protocol: INPUT EXPECTED ACTUAL
        argv = ["python3", checker, paths["input"], paths["answer"], paths["output"]]
    else:  # testlib's order: INPUT OUTPUT ANSWER
        argv = [checker, paths["input"], paths["output"], paths["answer"]]
    out = run_limited(argv, cwd=RUN_DIR, env=ENV, limits=checkers.CHECKER_LIMITS, merge_stderr=True)
    if mode == "checker":
        return checkers.python_verdict(out.exit_code)
    return checkers.testlib_verdict(out.exit_code, out.stdout[-4096:])


def _prepare_checker(req: dict) -> tuple[str | None, str | None]:
    """A testlib checker: (its compiled binary, or why it is unusable). Compiled once per container
    (the build cache), verified against its digest on every use."""
    spec = req.get("compare") or {}
    mode, source = spec.get("mode"), spec.get("checker") or ""
    if mode != "testlib":
        return None, None
    missing = checkers.missing_testlib(source)
    if missing:
        return None, missing
    cpp = LANGS["cpp"]
    ok, output, path, _ = build(cpp, source, tuple(checkers.TESTLIB_FLAGS))
    if not ok:
        return None, "checker does not compile: " + output[-3000:]
    return cpp.command(path, 0, "stdio", None)[0], None  # the checker runs as a C++ program


def _resolve_tests(req: dict) -> list[StoredTest] | None:
    ref = req.get("tests_ref")
    if ref is None:  # inline tests (self-test, debugging): kept only until the next inline request
        STORE.put(INLINE, decode_tests(req.get("tests", [])))
        ref = INLINE
    return STORE.get(ref)


def judge(req: dict) -> dict:
    lang = LANGS.get(req.get("language"))
    if lang is None:
        return {"ok": False, "error": f"unknown language {req.get('language')!r}"}
    tests = _resolve_tests(req)
    if tests is None:
        return {"ok": False, "missing_tests": req["tests_ref"]}
    _, checker_error = _prepare_checker(req)
    if checker_error:
        return {
            "ok": True,
            "compile_ok": True,
            "compile_output": "",
            "compile_cached": False,
            "tests": [],
            "healthy": True,
            "checker_error": checker_error,
        }
    ok, output, build_dir, cached = build(lang, req.get("source", ""))
    resp: dict = {
        "ok": True,
        "compile_ok": ok,
        "compile_output": output,
        "compile_cached": cached,
        "tests": [],
        "healthy": True,
    }
    if not ok:
        return resp
    for test in tests:
        result = run_test(lang, build_dir, req, test)
        resp["tests"].append(result)
        if not _cleanup_after_test():
            resp["healthy"] = False
            break
        if result["verdict"] == "TLE" and req.get("stop_at_timeout"):
            break  # the rest count as not passed (JudgeRequest.stop_at_timeout)
    return resp


def store(req: dict, stream) -> dict:
    """Keep a test set whose raw bytes follow the request line on `stream`."""
    ref, sizes = req.get("tests_ref"), req.get("sizes")
    if not isinstance(ref, str) or not isinstance(sizes, list):
        # The frame's length is unknown, so the stream is out of step: exit (healthy false).
        return {
            "ok": False,
            "error": "store needs tests_ref (str) and sizes (list)",
            "healthy": False,
        }
    size = STORE.put(ref, read_tests(stream, sizes))
    _trim_heap()
    return {"ok": True, "bytes": size, "sets": len(STORE)}


def _trim_heap() -> None:
    """Give the decoded request's memory back: a forked candidate's maxrss starts at ours."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def selftest() -> dict:
    report, all_ok = {}, True
    for name, lang in LANGS.items():
        test = lang.selftest
        r = judge(
            {
                "language": name,
                "mode": "stdio",
                "source": test.source,
                "tests": [{"input": test.stdin, "output": test.expected}],
                "time_limit_s": 5,
                "memory_limit_mb": 512,
            }
        )
        verdicts = [t["verdict"] for t in r.get("tests", [])]
        good = r.get("compile_ok") and verdicts == ["AC"]
        all_ok &= bool(good)
        report[name] = {
            "ok": bool(good),
            "verdicts": verdicts,
            "compile_output": r.get("compile_output", "")[-2000:],
            "version": lang.read_version(ENV),
        }
    return {"ok": all_ok, "languages": report}


def main() -> None:
    _no_dump()
    # As PID 1 we receive only signals we handle; Python handles SIGINT (KeyboardInterrupt), so
    # restore the default, or a candidate's kill(1, SIGINT) would stop its runner.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    for d in (CACHE_DIR, RUN_DIR, IO_DIR):
        os.makedirs(d, exist_ok=True)
    os.chmod(WORK, 0o700)
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    while True:
        line = stdin.readline()
        if not line:
            return
        started = time.monotonic()
        req: dict = {}
        try:
            req = json.loads(line)
            op = req.get("op")
            if op == "ping":
                resp = {"ok": True, "version": PROTOCOL_VERSION}
            elif op == "selftest":
                resp = selftest()
            elif op == "judge":
                resp = judge(req)
            elif op == "store":
                resp = store(req, stdin)
            else:
                resp = {"ok": False, "error": f"unknown op {op!r}"}
        except Exception as exc:  # noqa: BLE001 - report, then let the pool replace this container
            resp = {
                "ok": False,
                "error": f"runner error: {type(exc).__name__}: {exc}",
                "healthy": False,
            }
        resp["runner_s"] = round(time.monotonic() - started, 4)
        if isinstance(req, dict) and "id" in req:
            resp["id"] = req["id"]
        stdout.write(json.dumps(resp).encode() + b"\n")
        stdout.flush()
        if resp.get("healthy") is False:
            return  # exit: the container stops and the pool starts a fresh one


if __name__ == "__main__":
    main()
