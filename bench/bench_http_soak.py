"""The HTTP judge under sustained load: several `python -m sandbox serve` servers (the Docker
engine behind each), several clients (`open_engine("http", url=[...])`, one per thread, as
separate training processes would be) judging a steady stream of small programs for a while,
one server killed mid-run and started again on its port.

Every request is a program with a known verdict (a + b in Python or C++, right or wrong on
purpose, no time limits hit) carrying its own id in a comment, so no verdict cache could answer
it (the servers also run with --no-cache and the clients send use_cache=false). Reports:

  throughput (programs/s) and request latency p50/p99, overall and per window (a minute);
  each server's memory: RSS of its process tree (the server and its `docker run` clients,
    psutil) and its containers' cgroup memory, first / last / max and the slope after warm-up
    per server life (a restarted server starts a new life);
  verdict accounting: every request answered exactly once with its expected verdict (lost,
    doubled, wrong), overall and for the requests in flight around the restart;
  failover: requests sent again and requests answered by another server than first asked
    (counted from the clients' HTTP traffic), the outage and how long the restarted server took
    to answer a client again;
  back-pressure: answers by status per server (429 busy, 503 draining, 409 test sets gone),
    the servers' queue depth (`pending` from /v1/health) against their capacity.

    .venv/bin/python bench/bench_http_soak.py                                  # 600 s, 2 servers
    .venv/bin/python bench/bench_http_soak.py --seconds 20 --window 10 --json /tmp/soak.json

Exits 1 when a request was lost, doubled or answered wrong.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx
import psutil
from rich.console import Console
from rich.table import Table

from sandbox import JudgeRequest, TestCase
from sandbox.container import LABEL, OWNER_LABEL
from sandbox.engines import open_engine

TOKEN = f"soak-{uuid.uuid4().hex}"
ID_RE = re.compile(rb"soak:(c\d+-\d+)")
PY = {
    "AC": "a, b = map(int, input().split())\nprint(a + b)  # soak:{id}\n",
    "WA": "a, b = map(int, input().split())\nprint(a + b + 1)  # soak:{id}\n",
}
CPP = {
    v: '#include <cstdio>\n// soak:{id}\nint main() { long long a, b; scanf("%lld %lld", &a, &b);'
    f' printf("%lld\\n", a + b{" + 1" if v == "WA" else ""}); }}\n'
    for v in ("AC", "WA")
}
# A few test sets shared by all requests: each crosses to a server once, and again after the
# restart (the restarted server has forgotten them: 409, the client sends them again).
TEST_SETS = [
    [
        TestCase(input=f"{a} {b}\n", output=f"{a + b}\n")
        for a, b in ((k, 1), (k * 7, 3), (-k, 2 * k))
    ]
    for k in range(1, 5)
]


@dataclass
class Config:
    seconds: float = 600
    servers: int = 2
    clients: int = 3
    pool_size: int = 1
    max_queue: int = 8
    batch_size: int = 4
    per_call: int = 8
    cpp_share: float = 0.25
    wrong_share: float = 0.3
    restart_at: float = 0.5
    restart_pause_s: float = 5.0
    restart_signal: str = "kill"
    window_s: float = 60.0
    sample_s: float = 3.0
    warmup_s: float | None = None
    seed: int = 0


# -- servers ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `python -m sandbox serve` on a fixed port; each start is a new life (name s1, s1')."""

    def __init__(self, index: int, cfg: Config, log_dir: Path):
        self.name = f"s{index + 1}"
        self.cfg = cfg
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_dir = log_dir
        self.proc: subprocess.Popen | None = None
        self.life = ""
        self.down = False  # being killed: not sampled
        self.pids: list[int] = []  # one per life

    def start(self) -> float:
        """Start and wait until /v1/health answers; returns the time it did."""
        self.life = self.name if not self.life else self.life + "'"
        self.down = False
        log = open(self.log_dir / f"{self.life}.log", "w")  # noqa: SIM115 - the child holds it
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sandbox", "serve", "--engine", "docker", "--host",
             "127.0.0.1", "--port", str(self.port), "--pool-size", str(self.cfg.pool_size),
             "--no-cache", "--max-queue", str(self.cfg.max_queue)],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO), "ALETHEIA_SANDBOX_TOKEN": TOKEN},
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        log.close()
        self.pids.append(self.proc.pid)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"{self.life} exited: {self.log_text()[-1500:]}")
            try:
                if httpx.get(self.url + "/v1/health", timeout=2).status_code == 200:
                    return time.monotonic()
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise SystemExit(f"{self.life} did not come up: {self.log_text()[-1500:]}")

    def kill(self, how: str) -> None:
        """kill: SIGKILL to the server and its children at once (a crash: nothing drains);
        term: SIGTERM to the server (it drains: 503 to new batches, admitted ones finish)."""
        assert self.proc is not None
        self.down = True
        if how == "term":
            self.proc.send_signal(signal.SIGTERM)
        else:
            tree = [psutil.Process(self.proc.pid)]
            tree += tree[0].children(recursive=True)
            for p in tree:
                try:
                    p.kill()
                except psutil.NoSuchProcess:
                    pass
        self.proc.wait(timeout=120)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def log_text(self) -> str:
        return "".join(p.read_text() for p in sorted(self.log_dir.glob(f"{self.name}*.log")))

    def sample(self) -> dict | None:
        """RSS of the process tree, containers' memory, the health counters (None if down)."""
        if self.proc is None or self.proc.poll() is not None or self.down:
            return None
        try:
            root = psutil.Process(self.proc.pid)
            if root.status() == psutil.STATUS_ZOMBIE:
                return None
            rss = sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])
        except psutil.NoSuchProcess:
            return None
        try:
            health = httpx.get(self.url + "/v1/health", timeout=3).json()
        except (httpx.HTTPError, ValueError):
            health = {}
        return {
            "life": self.life,
            "rss_mb": rss / 2**20,
            "containers_mb": containers_mb(self.proc.pid),
            **{k: health.get(k) for k in ("pending", "capacity", "judged", "refused_busy")},
        }


def containers_mb(owner_pid: int) -> float | None:
    """Memory charged to the cgroups of the containers this server owns (cgroup v1 or v2)."""
    owner = f"{socket.gethostname()}:{owner_pid}"
    out = subprocess.run(
        ["docker", "ps", "-q", "--no-trunc", "--filter", f"label={OWNER_LABEL}={owner}"],
        capture_output=True, text=True, timeout=30, check=False,
    ).stdout.split()  # fmt: skip
    total, found = 0, False
    for cid in out:
        for path in (
            f"/sys/fs/cgroup/memory/{cid}/memory.usage_in_bytes",
            f"/sys/fs/cgroup/memory/docker/{cid}/memory.usage_in_bytes",
            f"/sys/fs/cgroup/system.slice/docker-{cid}.scope/memory.current",
        ):
            try:
                total += int(Path(path).read_text())
                found = True
                break
            except OSError:
                continue
    return total / 2**20 if found else None


# -- clients ------------------------------------------------------------------------------------


@dataclass
class Record:
    """What every client saw, shared by the threads (one lock)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    want: dict[str, str] = field(default_factory=dict)  # id -> expected verdict
    sent_at: dict[str, float] = field(default_factory=dict)
    answers: dict[str, list[tuple[str, float]]] = field(default_factory=lambda: defaultdict(list))
    # The clients' POSTs: [server url, HTTP status (0: no answer), time answered,
    # time sent]; per id, the
    # POSTs that carried it.
    posts: list[list] = field(default_factory=list)
    posts_of: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)


def make_requests(
    client: int, start: int, n: int, rng: random.Random, cfg: Config
) -> list[tuple[str, JudgeRequest, str]]:
    out = []
    for seq in range(start, start + n):
        rid = f"c{client}-{seq}"
        verdict = "WA" if rng.random() < cfg.wrong_share else "AC"
        lang, src = ("cpp", CPP) if rng.random() < cfg.cpp_share else ("python", PY)
        tests = TEST_SETS[rng.randrange(len(TEST_SETS))]
        req = JudgeRequest(language=lang, source=src[verdict].replace("{id}", rid), tests=tests)
        out.append((rid, req, verdict))
    return out


def hooks(rec: Record) -> dict:
    """httpx event hooks recording each POST's server, the ids it carried and its answer."""

    def on_request(request: httpx.Request) -> None:
        if request.method == "POST":
            with rec.lock:
                request.extensions["soak_post"] = n = len(rec.posts)
                rec.posts.append([str(request.url).split("/v1/")[0], 0, None, time.monotonic()])
                for rid in ID_RE.findall(request.content):
                    rec.posts_of[rid.decode()].append(n)

    def on_response(response: httpx.Response) -> None:
        n = response.request.extensions.get("soak_post")
        if n is not None:
            with rec.lock:
                rec.posts[n][1:3] = [response.status_code, time.monotonic()]

    return {"request": [on_request], "response": [on_response]}


def client_loop(client: int, urls: list[str], cfg: Config, rec: Record, end: float) -> None:
    rng = random.Random(f"{cfg.seed}-{client}")
    with open_engine(
        "http", url=urls, token=TOKEN, batch_size=cfg.batch_size, cache=False
    ) as engine:
        # Recording only: the engine's own client, to see each POST's server and answer.
        engine._http.event_hooks = hooks(rec)  # type: ignore[attr-defined]
        seq = 0
        while time.monotonic() < end:
            batch = make_requests(client, seq, cfg.per_call, rng, cfg)
            seq += len(batch)
            t0 = time.monotonic()
            with rec.lock:
                for rid, _, verdict in batch:
                    rec.want[rid] = verdict
                    rec.sent_at[rid] = t0
            try:
                for index, result in engine.judge_iter([r for _, r, _ in batch], use_cache=False):
                    with rec.lock:
                        rec.answers[batch[index][0]].append((result.verdict, time.monotonic()))
            except Exception as exc:  # noqa: BLE001 - counted (the ids stay unanswered: lost)
                with rec.lock:
                    rec.errors.append(f"client {client}: {type(exc).__name__}: {exc}")
                time.sleep(1)


# -- the run ------------------------------------------------------------------------------------


def run(cfg: Config) -> dict:
    # The clients' failover warnings are counted from their traffic instead of printed.
    logging.getLogger("sandbox.http").setLevel(logging.ERROR)
    log_dir = Path(tempfile.mkdtemp(prefix="soak-"))
    servers = [Server(i, cfg, log_dir) for i in range(cfg.servers)]
    rec = Record()
    samples: list[dict] = []
    events: dict[str, float] = {}
    load = {"start": Path("/proc/loadavg").read_text().split()[:3]}
    try:
        for s in servers:
            s.start()
        t0 = time.monotonic()
        end = t0 + cfg.seconds
        stop = threading.Event()

        def monitor() -> None:
            while not stop.is_set():
                now = time.monotonic() - t0
                for s in servers:
                    got = s.sample()
                    if got:
                        samples.append({"t": now, "server": s.name, **got})
                samples.append({"t": now, "load1": os.getloadavg()[0]})
                stop.wait(cfg.sample_s)

        threads = [threading.Thread(target=monitor, daemon=True)]
        urls = [s.url for s in servers]
        threads += [
            threading.Thread(target=client_loop, args=(c, urls, cfg, rec, end), daemon=True)
            for c in range(cfg.clients)
        ]
        for t in threads:
            t.start()
        if 0 < cfg.restart_at < 1:
            time.sleep(max(0.0, t0 + cfg.restart_at * cfg.seconds - time.monotonic()))
            victim = servers[0]
            events["kill"] = time.monotonic() - t0
            victim.kill(cfg.restart_signal)
            events["down"] = time.monotonic() - t0
            time.sleep(cfg.restart_pause_s)
            events["restart"] = time.monotonic() - t0
            events["up"] = victim.start() - t0
        for t in threads[1:]:
            t.join()
        events["drained"] = time.monotonic() - t0
        stop.set()
        threads[0].join()
    finally:
        for s in servers:
            s.stop()
    load["end"] = Path("/proc/loadavg").read_text().split()[:3]
    logs = {s.name: s.log_text() for s in servers}
    # Our servers' containers still there (a crashed server's are removed by its next life).
    ours = {f"{socket.gethostname()}:{pid}" for s in servers for pid in s.pids}
    listed = subprocess.run(
        ["docker", "ps", "-a", "--filter", f"label={LABEL}=1", "--format",
         '{{.ID}} {{.Label "' + OWNER_LABEL + '"}}'],
        capture_output=True, text=True, check=False,
    ).stdout.splitlines()  # fmt: skip
    stale = [ln for ln in listed if ln.split()[-1] in ours]
    report = analyse(cfg, rec, samples, events, t0, servers)
    report.update(
        config=asdict(cfg),
        load=load,
        server_log_problems={
            n: [ln for ln in text.splitlines() if re.search(r"Traceback|ERROR|Exception", ln)][:20]
            for n, text in logs.items()
        },
        containers_left=len(stale),
        logs=str(log_dir),
    )
    return report


# -- analysis -----------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float | None:
    """The q-quantile (0..1) by linear interpolation; None when there is nothing to measure."""
    if not values:
        return None
    v = sorted(values)
    k = (len(v) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def accounting(rec: Record, ids: list[str]) -> dict:
    lost = [i for i in ids if not rec.answers.get(i)]
    doubled = [i for i in ids if len(rec.answers.get(i, [])) > 1]
    wrong = [i for i in ids if rec.answers.get(i) and rec.answers[i][0][0] != rec.want[i]]
    return {
        "submitted": len(ids),
        "answered": len(ids) - len(lost),
        "lost": len(lost),
        "doubled": len(doubled),
        "wrong": len(wrong),
        "examples": {"lost": lost[:10], "doubled": doubled[:10], "wrong": wrong[:10]},
    }


def analyse(
    cfg: Config,
    rec: Record,
    samples: list[dict],
    events: dict[str, float],
    t0: float,
    servers: list[Server],
) -> dict:
    ids = sorted(rec.want)
    done = {i: rec.answers[i][0][1] - t0 for i in ids if rec.answers.get(i)}
    lat = {i: rec.answers[i][0][1] - rec.sent_at[i] for i in done}
    # Windows by completion time; the last one may be partial (clients drain after --seconds).
    windows = []
    n_win = max(1, math.ceil(cfg.seconds / cfg.window_s))
    for w in range(n_win):
        a, b = w * cfg.window_s, min((w + 1) * cfg.window_s, cfg.seconds)
        inside = [lat[i] for i, t in done.items() if a <= t < b]
        windows.append(
            {
                "from_s": a,
                "to_s": b,
                "programs": len(inside),
                "per_s": len(inside) / (b - a),
                "p50_s": pct(inside, 0.5),
                "p99_s": pct(inside, 0.99),
                "max_s": max(inside, default=None),
                "restart": "kill" in events
                and a <= events["kill"] < b
                or "up" in events
                and a <= events["up"] < b,
            }
        )
    in_run = [t for t in done.values() if t < cfg.seconds]
    overall = {
        "programs_in_run": len(in_run),
        "per_s": len(in_run) / cfg.seconds,
        "p50_s": pct(list(lat.values()), 0.5),
        "p99_s": pct(list(lat.values()), 0.99),
        "max_s": max(lat.values(), default=None),
        # The slowest request: when it was sent and the answers its POSTs got, in order.
        "slowest": slowest(rec, lat, t0),
        "drain_s": events.get("drained", cfg.seconds) - cfg.seconds,
    }
    # Failover, from the clients' traffic.
    name = {s.url: s.name for s in servers}
    statuses: dict[str, Counter] = defaultdict(Counter)  # per server: POSTs by answer
    for url, code, *_ in rec.posts:
        statuses[name.get(url, url)][str(code or "no answer")] += 1
    retried = moved = twice = 0
    for rid in ids:
        posts = [rec.posts[n] for n in rec.posts_of.get(rid, [])]
        ok = [url for url, code, *_ in posts if code == 200]
        retried += len(posts) > 1
        moved += bool(ok) and ok[0] != posts[0][0]
        twice += len(ok) > 1
    restart: dict = {}
    if "up" in events:
        back = [
            t - t0 for url, code, t, _ in rec.posts
            if url == servers[0].url and code == 200 and t - t0 > events["up"]
        ]  # fmt: skip
        restart = {
            **events,
            "outage_s": events["up"] - events["kill"],
            "traffic_back_after_up_s": (min(back) - events["up"]) if back else None,
        }
        # Requests in flight at the kill or sent until 10 s after traffic came back.
        until = events["up"] + (restart["traffic_back_after_up_s"] or 0) + 10
        around = [
            i for i in ids
            if rec.sent_at[i] - t0 <= until and done.get(i, math.inf) >= events["kill"]
        ]  # fmt: skip
        restart["accounting"] = accounting(rec, around)
        # What the kill did to the work on the victim: POSTs it never answered, sent before the
        # kill (cut mid-batch) or during the outage (refused), and what became of their requests.
        unanswered = [
            (n, sent - t0 < events["kill"])
            for n, (url, code, _, sent) in enumerate(rec.posts)
            if url == servers[0].url and code == 0
        ]
        cut = {n for n, before in unanswered if before}
        cut_ids = [i for i in ids if cut & set(rec.posts_of.get(i, []))]
        restart.update(
            posts_cut_at_kill=len(cut),
            posts_refused_while_down=len(unanswered) - len(cut),
            requests_cut_at_kill=len(cut_ids),
            requests_cut_then_answered=sum(bool(rec.answers.get(i)) for i in cut_ids),
        )
    return {
        "overall": overall,
        "windows": windows,
        "accounting": accounting(rec, ids),
        "failover": {
            "requests_sent_again": retried,
            "requests_moved": moved,
            "requests_answered_by_two_servers": twice,
            "posts_by_server_and_status": {k: dict(v) for k, v in statuses.items()},
            "client_errors": rec.errors[:20],
        },
        "restart": restart,
        "memory": memory(cfg, samples),
        "queue": queue(samples),
        "samples": samples,
    }


def memory(cfg: Config, samples: list[dict]) -> dict:
    """Per server life: RSS (and containers') first / last / max and the slope after warm-up."""
    warm = cfg.warmup_s if cfg.warmup_s is not None else min(60.0, 0.15 * cfg.seconds)
    out = {}
    for life in sorted({s["life"] for s in samples if "life" in s}):
        rows = [s for s in samples if s.get("life") == life]
        start = rows[0]["t"]
        steady = [s for s in rows if s["t"] - start >= warm and s["t"] <= cfg.seconds]
        entry: dict = {"from_s": start, "to_s": rows[-1]["t"], "samples": len(rows)}
        for key in ("rss_mb", "containers_mb"):
            vals = [s[key] for s in rows if s[key] is not None]
            if not vals:
                continue
            pts = [(s["t"], s[key]) for s in steady if s[key] is not None]
            entry[key] = {
                "first": vals[0], "last": vals[-1], "max": max(vals),
                "slope_mb_per_min": slope(pts),
                # A growth that flattens (allocator pools filling) shows here as ~0.
                "slope_2nd_half_mb_per_min": slope(pts[len(pts) // 2 :]),
                "steady_from_s": pts[0][0] if pts else None,
            }  # fmt: skip
        out[life] = entry
    return out


def slope(pts: list[tuple[float, float]]) -> float | None:
    """Least-squares slope in MB per minute (None below 3 points)."""
    if len(pts) < 3 or pts[-1][0] <= pts[0][0]:
        return None
    return statistics.linear_regression([t for t, _ in pts], [v for _, v in pts]).slope * 60


def slowest(rec: Record, lat: dict[str, float], t0: float) -> dict | None:
    if not lat:
        return None
    rid = max(lat, key=lat.__getitem__)
    posts = [rec.posts[n] for n in rec.posts_of.get(rid, [])]
    return {
        "id": rid,
        "latency_s": lat[rid],
        "sent_at_s": rec.sent_at[rid] - t0,
        "answers": [code or "no answer" for _, code, *_ in posts],
    }


def queue(samples: list[dict]) -> dict:
    out = {}
    for life in sorted({s["life"] for s in samples if "life" in s}):
        rows = [s for s in samples if s.get("life") == life and s.get("pending") is not None]
        if rows:
            out[life] = {
                "capacity": rows[-1]["capacity"],
                "pending_mean": statistics.fmean(s["pending"] for s in rows),
                "pending_max": max(s["pending"] for s in rows),
                "judged": rows[-1]["judged"],
                "refused_busy": rows[-1]["refused_busy"],
            }
    return out


# -- output -------------------------------------------------------------------------------------


def f(x: float | None, fmt: str = ".2f") -> str:
    return "-" if x is None else format(x, fmt)


def show(r: dict) -> None:
    con = Console(width=150)
    o, a, fo, rs = r["overall"], r["accounting"], r["failover"], r["restart"]
    cfg = r["config"]
    con.print(
        f"[bold]HTTP judge soak[/]: {cfg['servers']} servers (docker, {cfg['pool_size']} "
        f"container(s) each, max queue {cfg['max_queue']}), {cfg['clients']} clients, "
        f"{cfg['seconds']:.0f} s; load {' '.join(r['load']['start'])} -> {' '.join(r['load']['end'])}"
    )
    con.print(
        f"throughput {o['per_s']:.2f} programs/s ({o['programs_in_run']} in the run), latency "
        f"p50 {f(o['p50_s'])} s p99 {f(o['p99_s'])} s max {f(o['max_s'])} s; drain after the "
        f"end {o['drain_s']:.1f} s"
    )
    if o["slowest"]:
        sl = o["slowest"]
        con.print(
            f"slowest request {sl['id']}: {sl['latency_s']:.1f} s, sent at {sl['sent_at_s']:.1f} s, "
            f"its POSTs answered {sl['answers']}"
        )
    con.print(
        f"verdicts: {a['submitted']} submitted, {a['answered']} answered, lost {a['lost']}, "
        f"doubled {a['doubled']}, wrong {a['wrong']}"
        + (
            f"; around the restart: {rs['accounting']['submitted']} submitted, lost "
            f"{rs['accounting']['lost']}, doubled {rs['accounting']['doubled']}, wrong "
            f"{rs['accounting']['wrong']}"
            if rs
            else ""
        )
    )
    t = Table("window", "programs", "per s", "p50 s", "p99 s", "max s", "")
    for w in r["windows"]:
        t.add_row(
            f"{w['from_s']:.0f}-{w['to_s']:.0f} s", str(w["programs"]), f(w["per_s"]),
            f(w["p50_s"]), f(w["p99_s"]), f(w["max_s"]), "restart" if w["restart"] else "",
        )  # fmt: skip
    con.print(t)
    t = Table("server life", "span s", "RSS first/last/max MB", "RSS slope MB/min (2nd half)",
              "containers first/last/max MB", "containers slope", "pending mean/max (cap)",
              "judged", "429s")  # fmt: skip
    for life, m in r["memory"].items():
        rss, cm, q = m.get("rss_mb", {}), m.get("containers_mb", {}), r["queue"].get(life, {})
        t.add_row(
            life, f"{m['from_s']:.0f}-{m['to_s']:.0f}",
            "/".join(f(rss.get(k), ".0f") for k in ("first", "last", "max")),
            f"{f(rss.get('slope_mb_per_min'), '+.2f')} ({f(rss.get('slope_2nd_half_mb_per_min'), '+.2f')})",
            "/".join(f(cm.get(k), ".0f") for k in ("first", "last", "max")),
            f(cm.get("slope_mb_per_min"), "+.2f"),
            f"{f(q.get('pending_mean'), '.1f')}/{q.get('pending_max', '-')} ({q.get('capacity', '-')})",
            str(q.get("judged", "-")), str(q.get("refused_busy", "-")),
        )  # fmt: skip
    con.print(t)
    con.print(
        f"failover: {fo['requests_sent_again']} requests sent again, {fo['requests_moved']} "
        f"answered by another server than first asked; POSTs by server and answer: "
        f"{fo['posts_by_server_and_status']}"
    )
    if rs:
        con.print(
            f"restart ({cfg['restart_signal']}) at {rs['kill']:.1f} s, up at {rs['up']:.1f} s "
            f"(outage {rs['outage_s']:.1f} s), first answer to a client "
            f"{f(rs['traffic_back_after_up_s'])} s after it was up; {rs['posts_cut_at_kill']} "
            f"POSTs cut by the kill ({rs['requests_cut_at_kill']} requests, "
            f"{rs['requests_cut_then_answered']} of them answered elsewhere), "
            f"{rs['posts_refused_while_down']} refused while it was down"
        )
    for e in fo["client_errors"][:5]:
        con.print(f"[red]client error[/]: {e}")
    for name, lines in r["server_log_problems"].items():
        for ln in lines[:3]:
            con.print(f"[yellow]{name} log[/]: {ln}")
    con.print(f"sandbox containers left after the run: {r['containers_left']}")


def main() -> None:
    d = Config()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=d.seconds, help="how long clients submit")
    p.add_argument("--servers", type=int, default=d.servers)
    p.add_argument("--clients", type=int, default=d.clients, help="client threads, one engine each")
    p.add_argument("--pool-size", type=int, default=d.pool_size, help="containers per server")
    p.add_argument("--max-queue", type=int, default=d.max_queue, help="server --max-queue")
    p.add_argument("--batch-size", type=int, default=d.batch_size, help="client batch size")
    p.add_argument("--per-call", type=int, default=d.per_call, help="requests per judge() call")
    p.add_argument("--cpp-share", type=float, default=d.cpp_share)
    p.add_argument("--restart-at", type=float, default=d.restart_at,
                   help="fraction of the run at which s1 is killed (0: no restart)")  # fmt: skip
    p.add_argument("--restart-pause", type=float, default=d.restart_pause_s, dest="restart_pause_s")
    p.add_argument("--restart-signal", choices=("kill", "term"), default=d.restart_signal)
    p.add_argument("--window", type=float, default=d.window_s, dest="window_s")
    p.add_argument("--sample", type=float, default=d.sample_s, dest="sample_s")
    p.add_argument("--warmup", type=float, default=None, dest="warmup_s",
                   help="seconds of each server life left out of the memory slope "
                   "(default: 15%% of the run, at most 60)")  # fmt: skip
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--json", type=Path, help="write every figure here")
    args = vars(p.parse_args())
    out = args.pop("json")
    cfg = Config(**args)
    report = run(cfg)
    show(report)
    if out:
        out.write_text(json.dumps(report, indent=1))
    a = report["accounting"]
    sys.exit(1 if a["lost"] or a["doubled"] or a["wrong"] else 0)


if __name__ == "__main__":
    main()
