"""Regenerate every bundled problem's tests.json, deterministically.

Inputs come from the seeded generators below (hand-written edge cases first, then random
and large cases); expected outputs come from RUNNING the problem's reference
solutions/correct.py on each input, never from hand. Same seed in, same bytes out.

    python3 data/bundled/_tools/make_tests.py [slug ...]
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = 20261130
GENERATORS: dict[str, Callable[[random.Random], list[str]]] = {}


def problem(slug: str) -> Callable:
    def register(fn: Callable[[random.Random], list[str]]) -> Callable:
        GENERATORS[slug] = fn
        return fn

    return register


def nums(values) -> str:
    return " ".join(map(str, values))


def rand_list(rng: random.Random, n: int, lo: int, hi: int) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(n)]


def run_reference(slug: str, text: str) -> str:
    sol = ROOT / slug / "solutions" / "correct.py"
    proc = subprocess.run(
        [sys.executable, str(sol)],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{slug}: correct.py failed on an input: {proc.stderr[-2000:]}")
    return proc.stdout


def make(slug: str) -> None:
    rng = random.Random(f"{SEED}:{slug}")
    inputs = GENERATORS[slug](rng)
    tests = [{"input": text, "output": run_reference(slug, text)} for text in inputs]
    out = ROOT / slug / "tests.json"
    out.write_text(json.dumps(tests, indent=1) + "\n")
    size = out.stat().st_size
    print(f"{slug:28s} {len(tests):3d} tests {size / 1024:8.1f} KiB")


# ---------------------------------------------------------------- generators


@problem("budget-pairs")
def _budget_pairs(rng: random.Random) -> list[str]:
    def case(a: list[int], k: int) -> str:
        return f"{len(a)} {k}\n{nums(a)}\n"

    return [
        case([2, 8, 5, 3], 10),
        case([7], 100),
        case([4, 6], 10),
        case([0] * 6, 0),
        case(rand_list(rng, 10, 0, 20), 15),
        case(rand_list(rng, 1000, 0, 10**9), rng.randint(10**9, 2 * 10**9)),
        case(rand_list(rng, 5000, 0, 10**9), 1_500_000_000),
        case(rand_list(rng, 70000, 0, 9), 18),
        case(rand_list(rng, 500, 0, 1000), 1000),
        case([10**9] * 50, 2 * 10**9),
    ]


@problem("best-streak")
def _best_streak(rng: random.Random) -> list[str]:
    def case(a: list[int]) -> str:
        return f"{len(a)}\n{nums(a)}\n"

    return [
        case([3, -5, 4, -1, 2, -7]),
        case([-7]),
        case([5]),
        case(rand_list(rng, 8, -100, -1)),
        case([10**9] * 5000),
        case(rand_list(rng, 10, -10, 10)),
        case(rand_list(rng, 1000, -(10**9), 10**9)),
        case(rand_list(rng, 20000, -9, 9)),
        case([0] * 10),
        case(rand_list(rng, 3000, -(10**6), 2 * 10**6)),
    ]


@problem("rainfall-log")
def _rainfall_log(rng: random.Random) -> list[str]:
    def case(a: list[int], queries: list[tuple[int, int]]) -> str:
        lines = [f"{len(a)} {len(queries)}", nums(a)] + [f"{l} {r}" for l, r in queries]
        return "\n".join(lines) + "\n"

    def ordered(n: int, q: int) -> list[tuple[int, int]]:
        return [tuple(sorted((rng.randint(1, n), rng.randint(1, n)))) for _ in range(q)]

    def mixed(n: int, q: int) -> list[tuple[int, int]]:
        return [(rng.randint(1, n), rng.randint(1, n)) for _ in range(q)]

    return [
        case([1, 2, 3, 4, 5], [(1, 3), (5, 2), (4, 4)]),
        case([5], [(1, 1)]),
        case([0] * 7, ordered(7, 5)),
        case(rand_list(rng, 12, 0, 50), mixed(12, 12)),
        case(rand_list(rng, 15, 0, 9), ordered(15, 10)),
        case(rand_list(rng, 1000, 0, 10**9), mixed(1000, 1000)),
        case(rand_list(rng, 8000, 0, 9), ordered(8000, 4000)),
        case(rand_list(rng, 2000, 9 * 10**8, 10**9), [(1, 2000)] * 3 + ordered(2000, 1000)),
        case(rand_list(rng, 100, 0, 10**9), [(i, i) for i in range(1, 101)]),
        case(rand_list(rng, 1500, 0, 10**6), ordered(1500, 1500)),
    ]


@problem("prime-census")
def _prime_census(rng: random.Random) -> list[str]:
    values = [10, 1, 2, 97, 100, 7919, 1_000_000, 9_999_991, 10**7, rng.randint(10**5, 3 * 10**5)]
    return [f"{n}\n" for n in values]


@problem("square-floor")
def _square_floor(rng: random.Random) -> list[str]:
    def case(xs: list[int]) -> str:
        return f"{len(xs)}\n" + "\n".join(map(str, xs)) + "\n"

    near = [k * k - 1 for k in (rng.randint(10**8, 10**9) for _ in range(200))]
    return [
        case([0, 8, 9, 1000000]),
        case([0]),
        case([1, 2, 3, 4]),
        case(rand_list(rng, 100, 0, 10**4)),
        case([rng.randint(1, 10**6) ** 2 for _ in range(300)]),
        case(rand_list(rng, 1000, 0, 10**18)),
        case(near),
        case([10**18]),
        case([10**18 - 1, (10**9 - 1) ** 2, (10**9 - 1) ** 2 - 1]),
        case(rand_list(rng, 500, 0, 10**9)),
    ]


@problem("festival-stages")
def _festival_stages(rng: random.Random) -> list[str]:
    def case(slots: list[tuple[int, int]]) -> str:
        return f"{len(slots)}\n" + "".join(f"{s} {e}\n" for s, e in slots)

    def rand_slots(n: int, span: int, max_len: int) -> list[tuple[int, int]]:
        out = []
        for _ in range(n):
            s = rng.randint(0, span - 1)
            out.append((s, min(span, s + rng.randint(1, max_len))))
        return out

    chain = [(i, i + 1) for i in range(50)]
    rng.shuffle(chain)
    nested = [(0, 10**9)] + [(10 * i + 1, 10 * i + 5) for i in range(30)]
    return [
        case([(1, 4), (3, 5), (0, 10), (4, 7)]),
        case([(5, 6)]),
        case([(2, 9)] * 6),
        case(chain),
        case(nested),
        case(rand_slots(12, 30, 8)),
        case(rand_slots(5000, 10**9, 10**6)),
        case(rand_slots(3000, 2000, 5)),
        case(rand_slots(2000, 10**9, 10**9)),
        case([(0, 1), (10**9 - 1, 10**9)]),
    ]


@problem("maze-courier")
def _maze_courier(rng: random.Random) -> list[str]:
    def case(rows: list[str]) -> str:
        return f"{len(rows)} {len(rows[0])}\n" + "\n".join(rows) + "\n"

    def rand_maze(n: int, m: int, wall: float) -> list[str]:
        cells = [["#" if rng.random() < wall else "." for _ in range(m)] for _ in range(n)]
        a, b = rng.sample(range(n * m), 2)
        cells[a // m][a % m], cells[b // m][b % m] = "S", "T"
        return ["".join(r) for r in cells]

    def walled_off(n: int, m: int) -> list[str]:
        rows = rand_maze(n, m, 0.1)
        cells = [list(r.replace("S", ".").replace("T", ".")) for r in rows]
        for r in range(n):
            cells[r][m // 2] = "#"
        cells[0][0], cells[n - 1][m - 1] = "S", "T"
        return ["".join(r) for r in cells]

    def serpentine(n: int, m: int) -> list[str]:
        cells = [["." for _ in range(m)] for _ in range(n)]
        for r in range(1, n, 2):
            for c in range(m):
                cells[r][c] = "#"
            cells[r][m - 1 if r % 4 == 1 else 0] = "."
        cells[0][0], cells[n - 1][m - 1 if (n - 1) % 4 == 0 else 0] = "S", "T"
        return ["".join(r) for r in cells]

    return [
        case(["S.#.", ".##T", "...."]),
        case(["ST"]),
        case(["S#T"]),
        case(rand_maze(6, 7, 0.25)),
        case(rand_maze(40, 40, 0.3)),
        case(walled_off(50, 60)),
        case(serpentine(201, 300)),
        case(rand_maze(300, 300, 0.2)),
        case(["S", ".", ".", "T"]),
        case(rand_maze(100, 150, 0.35)),
    ]


def edge_lines(edges) -> str:
    return "".join(" ".join(map(str, e)) + "\n" for e in edges)


@problem("freight-routes")
def _freight_routes(rng: random.Random) -> list[str]:
    def case(n: int, edges: list[tuple[int, int, int]]) -> str:
        return f"{n} {len(edges)}\n" + edge_lines(edges)

    def rand_graph(n: int, m: int, wmax: int) -> list[tuple[int, int, int]]:
        return [(rng.randint(1, n), rng.randint(1, n), rng.randint(1, wmax)) for _ in range(m)]

    line = [(i, i + 1, rng.randint(9 * 10**8, 10**9)) for i in range(1, 3000)]
    rng.shuffle(line)
    two_parts = [(rng.randint(1, 50), rng.randint(1, 50), rng.randint(1, 100)) for _ in range(100)]
    two_parts += [
        (rng.randint(51, 100), rng.randint(51, 100), rng.randint(1, 100)) for _ in range(100)
    ]
    return [
        case(4, [(1, 2, 5), (2, 4, 5), (1, 3, 2), (3, 4, 9)]),
        case(1, []),
        case(2, []),
        case(2, [(2, 1, 7), (1, 1, 3), (1, 2, 9), (2, 1, 4)]),
        case(6, [(1, 2, 1), (2, 3, 1), (3, 6, 1), (1, 6, 10), (4, 5, 1)]),
        case(3000, line),
        case(1000, rand_graph(1000, 3000, 10**9)),
        case(100, two_parts),
        case(3000, rand_graph(3000, 6000, 1000)),
        case(500, [(i, i + 1, 1) for i in range(1, 500)] + [(1, 500, 1000)]),
    ]


@problem("friend-groups")
def _friend_groups(rng: random.Random) -> list[str]:
    def case(n: int, edges: list[tuple[int, int]]) -> str:
        return f"{n} {len(edges)}\n" + edge_lines(edges)

    def forest(n: int) -> list[tuple[int, int]]:
        edges = [(i, rng.randint(1, i - 1)) for i in range(2, n + 1) if rng.random() < 0.9]
        rng.shuffle(edges)
        return edges

    chain = [(i + 1, i) for i in range(1, 6000)]
    rng.shuffle(chain)
    return [
        case(6, [(1, 2), (2, 3), (5, 6), (3, 1)]),
        case(1, []),
        case(5, []),
        case(4, [(1, 2), (2, 1), (1, 2), (3, 4)]),
        case(3, [(1, 1), (2, 2), (2, 3)]),
        case(6000, chain),
        case(1000, forest(1000)),
        case(2000, [(rng.randint(1, 2000), rng.randint(1, 2000)) for _ in range(1500)]),
        case(8, [(a, b) for a in range(1, 9) for b in range(a + 1, 9)]),
        case(300, [(1, i) for i in range(2, 301)]),
    ]


@problem("ticket-machine")
def _ticket_machine(rng: random.Random) -> list[str]:
    def case(x: int, coins: list[int]) -> str:
        return f"{len(coins)} {x}\n{nums(coins)}\n"

    return [
        case(5, [1, 2, 5]),
        case(0, [3, 7]),
        case(7, [2, 4]),
        case(1, [1]),
        case(10, [10]),
        case(100, [1, 5, 10, 25, 50]),
        case(20000, list(range(1, 51))),
        case(20000, rng.sample(range(1, 200), 30)),
        case(rng.randint(100, 300), rng.sample(range(1, 40), 6)),
        case(20000, rng.sample(range(1, 20001), 50)),
    ]


@problem("longest-climb")
def _longest_climb(rng: random.Random) -> list[str]:
    def case(h: list[int]) -> str:
        return f"{len(h)}\n{nums(h)}\n"

    return [
        case([5, 1, 6, 2, 2, 7, 3, 4]),
        case([42]),
        case([7] * 10),
        case(list(range(20, 0, -1))),
        case(list(range(1, 31))),
        case(rand_list(rng, 15, 0, 5)),
        case(rand_list(rng, 1000, 0, 10**9)),
        case(rand_list(rng, 20000, 0, 20000)),
        case(sorted(rand_list(rng, 200, 0, 50))),
        case(rand_list(rng, 3000, 0, 10**9)),
    ]


def star_polygon(rng: random.Random, n: int, radius: int) -> list[tuple[int, int]]:
    """A simple polygon: distinct angles around the origin, each with its own radius, sorted by angle."""
    import math

    angles = sorted(rng.sample(range(3_600_000), n))
    pts = []
    for a in angles:
        r = rng.randint(radius // 3, radius)
        t = a / 3_600_000 * 2 * math.pi
        pts.append((round(r * math.cos(t)), round(r * math.sin(t))))
    return pts


@problem("garden-plot")
def _garden_plot(rng: random.Random) -> list[str]:
    def case(pts: list[tuple[int, int]]) -> str:
        return f"{len(pts)}\n" + "".join(f"{x} {y}\n" for x, y in pts)

    big = 10**8
    return [
        case([(0, 0), (0, 3), (4, 3), (4, 0)]),
        case([(0, 0), (1, 0), (0, 1)]),
        case([(0, 0), (0, 1), (1, 0)]),
        case([(-big, -big), (big, -big), (big, big), (-big, big)]),
        case(star_polygon(rng, 12, 100)),
        case(star_polygon(rng, 12, 100)[::-1]),
        case(star_polygon(rng, 3000, big)),
        case(star_polygon(rng, 3000, big)[::-1]),
        case([(0, 0), (3, 0), (3, 1), (1, 1), (1, 2), (3, 2), (3, 3), (0, 3)]),
        case(star_polygon(rng, 300, 10**4)[::-1]),
    ]


@problem("two-tickets")
def _two_tickets(rng: random.Random) -> list[str]:
    def case(a: list[int], t: int) -> str:
        return f"{len(a)} {t}\n{nums(a)}\n"

    evens = [2 * rng.randint(0, 9999) for _ in range(20000)]
    planted = rand_list(rng, 3000, 0, 10**9)
    i, j = rng.sample(range(3000), 2)
    planted[i], planted[j] = 123456789, 10**9 + 2 - 123456789
    half_first = [5] + rand_list(rng, 30, 11, 100) + [3, 7]
    return [
        case([4, 7, 1, 6, 3], 10),
        case([1, 2], 3),
        case([1, 2], 4),
        case([5, 5], 10),
        case(half_first, 10),
        case([0, 0, 0], 0),
        case(evens, 10_001),
        case(planted, 10**9 + 2),
        case([10**9] * 4, 2 * 10**9),
        case(rand_list(rng, 40, 0, 100), 150),
    ]


@problem("vault-code")
def _vault_code(rng: random.Random) -> list[str]:
    def case(rows: list[tuple[int, int, int]]) -> str:
        return f"{len(rows)}\n" + edge_lines(rows)

    def rows(t: int, amax: int, bmax: int, mmax: int) -> list[tuple[int, int, int]]:
        return [
            (rng.randint(0, amax), rng.randint(0, bmax), rng.randint(1, mmax)) for _ in range(t)
        ]

    return [
        case([(2, 10, 1000), (3, 0, 5), (7, 2, 1)]),
        case([(5, 0, 1)]),
        case([(0, 0, 7), (0, 5, 7), (9, 1, 7)]),
        case(rows(50, 100, 100, 1000)),
        case(rows(50, 10**9, 10**5, 10**9)),
        case(rows(200, 10**18, 10**4, 10**9)),
        case(rows(200, 10**18, 10**18, 10**18)),
        case([(10**18, 10**18, 10**18 - 1), (10**18 - 1, 10**18 - 1, 10**18)]),
        case(rows(100, 10**18, 1000, 1000)),
        case([(rng.randint(0, 10**18), rng.randint(1, 10**4), 1) for _ in range(20)]),
    ]


@problem("calendar-day")
def _calendar_day(rng: random.Random) -> list[str]:
    import datetime

    def case(dates: list[datetime.date]) -> str:
        return f"{len(dates)}\n" + "".join(f"{d.year} {d.month} {d.day}\n" for d in dates)

    def rand_dates(
        t: int, y0: int, y1: int, months: tuple[int, ...] = tuple(range(1, 13))
    ) -> list[datetime.date]:
        out = []
        for _ in range(t):
            y, m = rng.randint(y0, y1), rng.choice(months)
            out.append(datetime.date(y, m, rng.randint(1, 28)))
        return out

    d = datetime.date
    return [
        case([d(1, 1, 1), d(2000, 2, 29), d(2024, 12, 25)]),
        case([d(1, 1, 1)]),
        case([d(9999, 12, 31)]),
        case(rand_dates(20, 1901, 2099, (3, 4, 5, 6, 7, 8, 9, 10, 11, 12))),
        case([d(1900, 3, 1), d(2100, 3, 1), d(1600, 2, 29)]),
        case(rand_dates(300, 1901, 2099)),
        case(rand_dates(2000, 1, 9999)),
        case([d(2024, 2, 29), d(1996, 2, 29), d(2004, 1, 31)]),
        case(rand_dates(50, 1950, 2050, (5, 6, 7))),
        case(rand_dates(500, 1583, 3000)),
    ]


@problem("taller-ahead")
def _taller_ahead(rng: random.Random) -> list[str]:
    def case(h: list[int]) -> str:
        return f"{len(h)}\n{nums(h)}\n"

    return [
        case([3, 1, 3, 5, 2, 5]),
        case([7]),
        case([4, 4, 4, 4]),
        case(list(range(1, 11))),
        case(rand_list(rng, 20, 1, 5)),
        case(rand_list(rng, 1000, 1, 10**9)),
        case([1] * 30000),
        case(list(range(2000, 0, -1))),
        case(rand_list(rng, 5000, 1, 10)),
        case([10**9, 1, 10**9, 2, 10**9]),
        case(rand_list(rng, 3000, 1, 10**9)),
    ]


@problem("course-order")
def _course_order(rng: random.Random) -> list[str]:
    def case(n: int, rules: list[tuple[int, int]]) -> str:
        return f"{n} {len(rules)}\n" + edge_lines(rules)

    def dag(n: int, m: int) -> list[tuple[int, int]]:
        perm = list(range(1, n + 1))
        rng.shuffle(perm)
        rules = []
        for _ in range(m):
            i, j = sorted(rng.sample(range(n), 2))
            rules.append((perm[i], perm[j]))
        return rules

    with_cycle = dag(2000, 3000)
    a, b = with_cycle[0]
    with_cycle.append((b, a))
    rng.shuffle(with_cycle)
    return [
        case(5, [(3, 1), (1, 2), (5, 2), (4, 5)]),
        case(1, []),
        case(4, []),
        case(2, [(1, 2), (2, 1)]),
        case(3, [(3, 2), (3, 2), (2, 1)]),
        case(6, [(1, 2), (2, 3), (3, 1), (4, 5)]),
        case(8, dag(8, 6)),
        case(3000, dag(3000, 6000)),
        case(2000, with_cycle),
        case(500, dag(500, 300)),
    ]


@problem("backpack")
def _backpack(rng: random.Random) -> list[str]:
    def case(cap: int, items: list[tuple[int, int]]) -> str:
        return f"{len(items)} {cap}\n" + edge_lines(items)

    def items(n: int, wmax: int, vmax: int) -> list[tuple[int, int]]:
        return [(rng.randint(1, wmax), rng.randint(0, vmax)) for _ in range(n)]

    return [
        case(7, [(3, 4), (4, 5), (2, 3), (5, 8)]),
        case(1, [(1, 0)]),
        case(5, [(6, 100)]),
        case(10, [(5, 10), (5, 10), (5, 10)]),
        case(50, [(10, 60), (20, 100), (30, 120)]),
        case(10000, items(100, 10000, 10**9)),
        case(10000, items(100, 300, 10**9)),
        case(1000, items(40, 200, 1000)),
        case(10000, [(10000, 1)] + items(99, 10000, 100)),
        case(30, items(20, 10, 50)),
    ]


@problem("robot-walk")
def _robot_walk(rng: random.Random) -> list[str]:
    def case(grid: list[str], r: int, c: int, program: str) -> str:
        return f"{len(grid)} {len(grid[0])} {r} {c}\n" + "\n".join(grid) + f"\n{program}\n"

    def rand_case(n: int, m: int, wall: float, k: int) -> str:
        grid = [["#" if rng.random() < wall else "." for _ in range(m)] for _ in range(n)]
        r, c = rng.randint(1, n), rng.randint(1, m)
        grid[r - 1][c - 1] = "."
        program = "".join(rng.choice("UDLR") for _ in range(k))
        return case(["".join(row) for row in grid], r, c, program)

    return [
        case(["..#.", "....", ".#.."], 1, 1, "RRDDLU"),
        case(["."], 1, 1, "U"),
        case(["."], 1, 1, "UDLRLRUD"),
        case(["...", "...", "..."], 2, 2, "UUULLLDDDRRR"),
        case(["#.#", "...", "#.#"], 2, 2, "ULDR"),
        rand_case(5, 5, 0.2, 30),
        rand_case(200, 200, 0.1, 50000),
        rand_case(30, 1, 0.0, 1000),
        rand_case(40, 60, 0.4, 5000),
        case([".." * 50], 1, 1, "R" * 150 + "L" * 20),
    ]


def balanced_brackets(rng: random.Random, pairs: int, max_depth: int) -> str:
    out, stack = [], []
    opened = 0
    while opened < pairs or stack:
        if opened < pairs and (not stack or (len(stack) < max_depth and rng.random() < 0.5)):
            ch = rng.choice("([{")
            stack.append(ch)
            out.append(ch)
            opened += 1
        else:
            out.append({"(": ")", "[": "]", "{": "}"}[stack.pop()])
    return "".join(out)


@problem("nested-boxes")
def _nested_boxes(rng: random.Random) -> list[str]:
    def case(log: str) -> str:
        return f"{len(log)}\n{log}\n" if log else "0\n"

    mixed = balanced_brackets(rng, 20000, 50)
    k = mixed.index(")") if ")" in mixed else 0
    swapped = mixed[:k] + "]" + mixed[k + 1 :]
    return [
        case("([]{()})"),
        case(""),
        case("()"),
        case("((("),
        case(")("),
        case("([)]"),
        case("(" * 20000 + ")" * 20000),
        case(mixed),
        case(swapped),
        case("{}[]()" + "(" * 3),
    ]


@problem("signal-compression")
def _signal_compression(rng: random.Random) -> list[str]:
    def runs(count: int, max_len: int, letters: str = "abcdefghijklmnopqrstuvwxyz") -> str:
        out, prev = [], ""
        for _ in range(count):
            ch = rng.choice([c for c in letters if c != prev])
            out.append(ch * rng.randint(1, max_len))
            prev = ch
        return "".join(out)

    return [
        "aaabccccccccccd\n",
        "z\n",
        "abcdef\n",
        "q" * 9 + "\n",
        "q" * 10 + "\n",
        runs(50, 3) + "\n",
        "x" * 60000 + "\n",
        runs(20000, 3, "ab") + "\n",
        runs(3000, 30) + "\n",
        runs(40, 9) + "k\n",
    ]


@problem("rabbit-census")
def _rabbit_census(rng: random.Random) -> list[str]:
    def case(ns: list[int]) -> str:
        return f"{len(ns)}\n" + "\n".join(map(str, ns)) + "\n"

    return [
        case([0, 1, 10, 100]),
        case([0]),
        case([1, 2, 3, 4, 5]),
        case(list(range(60))),
        case(rand_list(rng, 30, 0, 10**5)),
        case(rand_list(rng, 200, 10**4, 10**5)),
        case([10**18]),
        case(rand_list(rng, 10, 60, 90)),
        case(rand_list(rng, 1000, 0, 10**18)),
        case([2 * 10**6, 3 * 10**6 + 7]),
    ]


@problem("xor-pairs")
def _xor_pairs(rng: random.Random) -> list[str]:
    def case(a: list[int], k: int) -> str:
        return f"{len(a)} {k}\n{nums(a)}\n"

    return [
        case([1, 2, 3, 0, 1], 3),
        case([5], 0),
        case([7, 7], 0),
        case([4, 4, 4, 4], 0),
        case(rand_list(rng, 20, 0, 7), 5),
        case(rand_list(rng, 2000, 0, 2**30 - 1), rng.randint(0, 2**30 - 1)),
        case(rand_list(rng, 3000, 0, 63), 0),
        case([3] * 66000, 0),
        case(rand_list(rng, 3000, 0, 255), 255),
        case([2**30 - 1, 0, 2**29, 2**29 - 1], 2**30 - 1),
    ]


@problem("popular-dish")
def _popular_dish(rng: random.Random) -> list[str]:
    def case(c: list[int]) -> str:
        return f"{len(c)}\n{nums(c)}\n"

    tied = [5] * 3 + [-2] * 3 + [9] * 3
    rng.shuffle(tied)
    late_small = [50] * 4 + [3] * 4
    return [
        case([40, 12, 40, 7, 12, 99, 7]),
        case([-5]),
        case([8, 3]),
        case(tied),
        case(late_small),
        case(rand_list(rng, 1000, -(10**9), 10**9)),
        case(rand_list(rng, 20000, -20, 20)),
        case(rand_list(rng, 5000, 0, 100) + [101] * 200),
        case([10**9, -(10**9), 10**9, -(10**9)]),
        case(rand_list(rng, 300, 1, 10)),
    ]


def rand_names(rng: random.Random, n: int) -> list[str]:
    names: set[str] = set()
    while len(names) < n:
        names.add("".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 6))))
    out = sorted(names)
    rng.shuffle(out)
    return out


@problem("leaderboard")
def _leaderboard(rng: random.Random) -> list[str]:
    def case(rows: list[tuple[str, int]]) -> str:
        return f"{len(rows)}\n" + edge_lines(rows)

    def rand_rows(n: int, lo: int, hi: int) -> list[tuple[str, int]]:
        return [(name, rng.randint(lo, hi)) for name in rand_names(rng, n)]

    sorted_ties = sorted(rand_rows(30, 0, 3), key=lambda r: (-r[1], r[0]))
    return [
        case([("mira", 30), ("bob", 45), ("ana", 30), ("zed", -5), ("ann", 30)]),
        case([("solo", 0)]),
        case(sorted_ties),
        case(rand_rows(20, 0, 5)),
        case(rand_rows(15, -2 * 10**9, 2 * 10**9)),
        case(rand_rows(2000, -2 * 10**9, 2 * 10**9)),
        case(rand_rows(6000, 0, 100)),
        case([("ab", 7), ("abc", 7), ("a", 7), ("b", 8)]),
        case(rand_rows(500, -(10**6), 10**6)),
        case([(name, -2 * 10**9) for name in rand_names(rng, 10)] + [("top", 2 * 10**9)]),
    ]


@problem("fruit-baskets")
def _fruit_baskets(rng: random.Random) -> list[str]:
    def case(a: list[int], k: int) -> str:
        return f"{len(a)} {k}\n{nums(a)}\n"

    return [
        case([1, 2, 1, 3, 3, 2, 3], 2),
        case([5], 1),
        case([4, 4, 4, 4], 1),
        case([1, 2, 3, 4, 5], 5),
        case([1, 2, 1, 2, 3, 2, 3, 2], 2),
        case(rand_list(rng, 30, 1, 4), 2),
        case(rand_list(rng, 2000, 1, 10**9), 50),
        case(rand_list(rng, 20000, 1, 3), 3),
        case(rand_list(rng, 5000, 1, 8), 3),
        case([10**9, 1] * 50 + [7], 2),
    ]


@problem("printing-jobs")
def _printing_jobs(rng: random.Random) -> list[str]:
    def case(a: list[int], k: int) -> str:
        return f"{len(a)} {k}\n{nums(a)}\n"

    return [
        case([7, 2, 5, 10, 8], 2),
        case([9], 1),
        case([3, 3, 3], 3),
        case([1, 1, 1, 100, 1, 1], 2),
        case([4, 8, 1, 9, 3, 3, 7], 3),
        case(rand_list(rng, 20, 1, 50), 4),
        case(rand_list(rng, 5000, 1, 10**9), 7),
        case([10**9] * 3000, 1),
        case(rand_list(rng, 3000, 1, 1000), 60),
        case([1] * 40 + [10**6] + [1] * 40, 5),
    ]


def main() -> None:
    slugs = sys.argv[1:] or sorted(GENERATORS)
    for slug in slugs:
        make(slug)


if __name__ == "__main__":
    main()
