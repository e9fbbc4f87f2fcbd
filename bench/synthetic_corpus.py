"""Synthetic corpora of Aletheia's shape, for measuring how the build grows with its input.

`write_corpus(n, path, seed)` writes `n` CodeContests-layout problems (the columns
`pipeline/problems/adapters/code_contests.py` reads: `name`, `description`, `public_tests`,
`private_tests`, `generated_tests`, `solutions`, `incorrect_solutions`, `time_limit`,
`memory_limit_bytes`, `difficulty`, `cf_rating`, `cf_tags`, `source`) to one Parquet file,
ingested as the source `code_contests:PATH`. Every problem is an instance of one of eight
small templates (`TEMPLATES`: sums modulo a constant, counts above a threshold, maximum
subarray, range sums, longest increasing run, pairs with a given sum, gcd, distinct residues),
its constants drawn per problem, each template with a correct solution in Python, C++ and
Java and one plausible wrong one per language (overflow, off-by-one, a missed edge case, a
quadratic loop): the build's `reference` candidates, and the seeds of its tree-sitter
`mutant` candidates. No model is involved: the run config takes its candidates from
`kind: reference` and `kind: mutant` sources only (`growth_config` in
bench/bench_build_growth.py).

The distributions, picked to resemble CodeContests+ (Aletheia's problem source) at a size
a 2-core machine can judge; they are ours, not fitted to the dataset:

- tests per problem: 1 public example + 1-3 private tests (uniform) + generated tests, their
  count `round(lognormal(median=tests_median - 3, sigma=0.5))` clipped to [2, 40]; with the
  default `tests_median=10` a problem has 10 tests at the median (the demo's bundled
  problems have 10 or 11). CodeContests+ ships more per problem (tens); `tests_median` scales it.
- the size n of each test's input (its array length): the example n in [3, 8]; the others
  drawn from three bands like a test generator's edge / random / stress cases: with
  probability 0.3 small (uniform 1-10), 0.5 medium (log-uniform 10-1,000), 0.2 large
  (log-uniform 1,000-`max_n`, default 20,000). Values are drawn per template (up to 10^9
  where an overflow is the wrong solution's bug).
- statements: the template's Input / Output / Example sections after a story of
  `lognormal(median=900 characters, sigma=0.4)` words from a fixed word list (CodeContests
  descriptions run to about 1-2 thousand characters).
- time limit 1-3 s (uniform whole seconds), memory 256 MB; difficulty and cf_rating
  (800-3,000 by 100) drawn uniformly.
- wrong solutions: each language's wrong program kept with probability 0.7 (at least one
  per problem), as CodeContests keeps a variable number of incorrect solutions.

Everything is drawn from `random.Random(seed)` per problem (`seed`, problem index): the same
(n, seed) gives byte-identical files, and problem i is the same whatever n is (a bigger
corpus extends a smaller one).

    PYTHONPATH=$PWD .venv/bin/python bench/synthetic_corpus.py -n 27 -o out/synthetic.parquet
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from math import gcd
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

# CodeContests' language codes (its proto): 2 C++, 3 Python 3, 4 Java.
LANG_CODES = {"cpp": 2, "python": 3, "java": 4}
DEMO_PROBLEMS = 27  # the demo's bundled problems (data/bundled): scale factor 1


@dataclass(frozen=True)
class Draw:
    """One problem's constants, its test inputs made from them."""

    params: dict[str, int]


@dataclass(frozen=True)
class Template:
    name: str
    title: str
    params: Callable[[random.Random], dict[str, int]]
    task: str  # the statement's task, {param} filled in
    input_spec: str
    output_spec: str
    make_input: Callable[[random.Random, int, dict[str, int]], str]
    solve: Callable[[str, dict[str, int]], str]
    correct: dict[str, str]  # language -> source, __PARAM__ filled in
    wrong: dict[str, str]
    tags: tuple[str, ...]


def _ints(text: str) -> list[int]:
    return [int(t) for t in text.split()]


def _array(rng: random.Random, n: int, lo: int, hi: int) -> str:
    return f"{n}\n{' '.join(str(rng.randint(lo, hi)) for _ in range(n))}\n"


# ---------------------------------------------------------------------- the templates
PY_READ = "import sys\ndata = sys.stdin.buffer.read().split()\nn = int(data[0])\na = list(map(int, data[1:1 + n]))\n"
CPP_HEAD = "#include <bits/stdc++.h>\nusing namespace std;\nint main() {\n    ios::sync_with_stdio(false);\n    cin.tie(nullptr);\n    int n;\n    cin >> n;\n"
JAVA_HEAD = (
    "import java.io.*;\nimport java.util.*;\n\npublic class Main {\n"
    "    public static void main(String[] args) throws IOException {\n"
    "        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));\n"
    "        int n = (int) readLong(in);\n"
)
JAVA_READ = (
    "    static long readLong(DataInputStream in) throws IOException {\n"
    "        int c = in.read();\n"
    "        while (c != '-' && (c < '0' || c > '9')) c = in.read();\n"
    "        boolean neg = c == '-';\n"
    "        if (neg) c = in.read();\n"
    "        long v = 0;\n"
    "        while (c >= '0' && c <= '9') { v = v * 10 + (c - '0'); c = in.read(); }\n"
    "        return neg ? -v : v;\n"
    "    }\n}\n"
)


def _java(body: str) -> str:
    return JAVA_HEAD + body + "    }\n" + JAVA_READ


def _sum_mod_solve(text: str, p: dict[str, int]) -> str:
    v = _ints(text)
    return f"{sum(v[1 : 1 + v[0]]) % p['M']}\n"


SUM_MOD = Template(
    name="sum-mod",
    title="Ledger Total",
    params=lambda r: {"M": r.randint(10**6, 10**9)},
    task="A ledger lists n amounts. Print their total modulo {M}.",
    input_spec="The first line contains n (1 <= n <= 200000). The second line contains n "
    "integers a_i (0 <= a_i <= 10^9).",
    output_spec="Print (a_1 + ... + a_n) mod {M}.",
    make_input=lambda r, n, p: _array(r, n, 0, 10**9),
    solve=_sum_mod_solve,
    correct={
        "python": PY_READ + "print(sum(a) % __M__)\n",
        "cpp": CPP_HEAD + "    long long s = 0;\n    for (int i = 0; i < n; i++) {\n"
        "        long long x;\n        cin >> x;\n        s = (s + x) % __M__;\n    }\n"
        '    cout << s << "\\n";\n    return 0;\n}\n',
        "java": _java(
            "        long s = 0;\n        for (int i = 0; i < n; i++) s = (s + readLong(in)) % __M__;\n"
            "        System.out.println(s);\n"
        ),
    },
    wrong={
        "python": PY_READ + "print(sum(a[:-1]) % __M__)\n",
        "cpp": CPP_HEAD + "    int s = 0;\n    for (int i = 0; i < n; i++) {\n"
        "        int x;\n        cin >> x;\n        s += x;\n    }\n"
        '    cout << s % __M__ << "\\n";\n    return 0;\n}\n',
        "java": _java(
            "        int s = 0;\n        for (int i = 0; i < n; i++) s = (int) ((s + readLong(in)) % __M__);\n"
            "        System.out.println(s);\n"
        ),
    },
    tags=("math", "implementation"),
)


def _above_solve(text: str, p: dict[str, int]) -> str:
    v = _ints(text)
    return f"{sum(1 for x in v[1 : 1 + v[0]] if x > p['T'])}\n"


COUNT_ABOVE = Template(
    name="count-above",
    title="Tall Enough",
    params=lambda r: {"T": r.randint(-50, 50)},
    task="Count the readings strictly greater than {T}.",
    input_spec="The first line contains n (1 <= n <= 200000). The second line contains n "
    "integers a_i (-100 <= a_i <= 100).",
    output_spec="Print the number of i with a_i > {T}.",
    make_input=lambda r, n, p: _array(r, n, -100, 100),
    solve=_above_solve,
    correct={
        "python": PY_READ + "print(sum(1 for x in a if x > __T__))\n",
        "cpp": CPP_HEAD + "    int c = 0;\n    for (int i = 0; i < n; i++) {\n"
        "        int x;\n        cin >> x;\n        if (x > __T__) c++;\n    }\n"
        '    cout << c << "\\n";\n    return 0;\n}\n',
        "java": _java(
            "        int c = 0;\n        for (int i = 0; i < n; i++) if (readLong(in) > __T__) c++;\n"
            "        System.out.println(c);\n"
        ),
    },
    wrong={
        "python": PY_READ + "print(sum(1 for x in a if x >= __T__))\n",
        "cpp": CPP_HEAD + "    int c = 0;\n    for (int i = 1; i < n; i++) {\n"
        "        int x;\n        cin >> x;\n        if (x > __T__) c++;\n    }\n"
        '    cout << c << "\\n";\n    return 0;\n}\n',
        "java": _java(
            "        int c = 0;\n        for (int i = 0; i < n; i++) if (readLong(in) > __T__ + 1) c++;\n"
            "        System.out.println(c);\n"
        ),
    },
    tags=("implementation",),
)


def _kadane(v: list[int]) -> int:
    best = cur = v[0]
    for x in v[1:]:
        cur = max(x, cur + x)
        best = max(best, cur)
    return best


MAX_SUBARRAY = Template(
    name="max-subarray",
    title="Best Stretch",
    params=lambda r: {"B": r.randint(10, 10**4)},
    task="Find the largest sum of a non-empty contiguous stretch of the changes "
    "(each between -{B} and {B}).",
    input_spec="The first line contains n (1 <= n <= 200000). The second line contains n "
    "integers a_i (-{B} <= a_i <= {B}).",
    output_spec="Print the maximum of a_l + ... + a_r over 1 <= l <= r <= n.",
    make_input=lambda r, n, p: _array(r, n, -p["B"], p["B"] // 2),
    solve=lambda text, p: f"{_kadane(_ints(text)[1:])}\n",
    correct={
        "python": PY_READ + "best = cur = a[0]\nfor x in a[1:]:\n    cur = max(x, cur + x)\n"
        "    best = max(best, cur)\nprint(best)\n",
        "cpp": CPP_HEAD
        + "    long long best = LLONG_MIN, cur = 0;\n    for (int i = 0; i < n; i++) {\n"
        "        long long x;\n        cin >> x;\n        cur = (i == 0) ? x : max(x, cur + x);\n"
        "        best = max(best, cur);\n    }\n"
        '    cout << best << "\\n";\n    return 0;\n}\n',
        "java": _java(
            "        long best = Long.MIN_VALUE, cur = 0;\n        for (int i = 0; i < n; i++) {\n"
            "            long x = readLong(in);\n            cur = (i == 0) ? x : Math.max(x, cur + x);\n"
            "            best = Math.max(best, cur);\n        }\n        System.out.println(best);\n"
        ),
    },
    wrong={
        "python": PY_READ + "best = cur = 0\nfor x in a:\n    cur = max(0, cur + x)\n"
        "    best = max(best, cur)\nprint(best)\n",
        "cpp": CPP_HEAD + "    long long best = 0, cur = 0;\n    for (int i = 0; i < n; i++) {\n"
        "        long long x;\n        cin >> x;\n        cur = max(0LL, cur + x);\n"
        "        best = max(best, cur);\n    }\n"
        '    cout << best << "\\n";\n    return 0;\n}\n',
        "java": _java(
            "        long best = Long.MIN_VALUE, cur = 0;\n        for (int i = 0; i < n; i++) {\n"
            "            long x = readLong(in);\n            if (i > 0) best = Math.max(best, cur);\n"
            "            cur = (i == 0) ? x : Math.max(x, cur + x);\n        }\n"
            "        System.out.println(n == 1 ? cur : best);\n"
        ),
    },
    tags=("dp", "greedy"),
)


def _run_solve(text: str, p: dict[str, int]) -> str:
    v = _ints(text)[1:]
    best = cur = 1
    for a, b in itertools.pairwise(v):
        cur = cur + 1 if b > a else 1
        best = max(best, cur)
    return f"{best}\n"


LONGEST_RUN = Template(
    name="longest-run",
    title="Rising Days",
    params=lambda r: {"V": r.randint(3, 50)},
    task="The readings take values from 1 to {V}. Find the length of the longest stretch of "
    "consecutive days whose readings strictly increase.",
    input_spec="The first line contains n (1 <= n <= 200000). The second line contains n "
    "integers a_i (1 <= a_i <= {V}).",
    output_spec="Print the length of the longest strictly increasing contiguous run.",
    make_input=lambda r, n, p: _array(r, n, 1, p["V"]),
    solve=_run_solve,
    correct={
        "python": PY_READ + "best = cur = 1\nfor i in range(1, n):\n"
        "    cur = cur + 1 if a[i] > a[i - 1] else 1\n    best = max(best, cur)\nprint(best)\n",
        "cpp": CPP_HEAD + "    vector<int> a(n);\n    for (auto& x : a) cin >> x;\n"
        "    int best = 1, cur = 1;\n    for (int i = 1; i < n; i++) {\n"
        "        cur = a[i] > a[i - 1] ? cur + 1 : 1;\n        best = max(best, cur);\n    }\n"
        '    cout << best << "\\n";\n    return 0;\n}\n',
        "java": _java(
            "        long prev = readLong(in);\n        int best = 1, cur = 1;\n"
            "        for (int i = 1; i < n; i++) {\n            long x = readLong(in);\n"
            "            cur = x > prev ? cur + 1 : 1;\n            best = Math.max(best, cur);\n"
            "            prev = x;\n        }\n        System.out.println(best);\n"
        ),
    },
    wrong={
        "python": PY_READ + "best = cur = 1\nfor i in range(1, n):\n"
        "    cur = cur + 1 if a[i] >= a[i - 1] else 1\n    best = max(best, cur)\nprint(best)\n",
        "cpp": CPP_HEAD + "    vector<int> a(n);\n    for (auto& x : a) cin >> x;\n"
        "    int best = 1, cur = 1;\n    for (int i = 1; i < n; i++) {\n"
        "        if (a[i] > a[i - 1]) cur++;\n        else { best = max(best, cur); cur = 1; }\n    }\n"
        '    cout << best << "\\n";\n    return 0;\n}\n',
        "java": _java(
            "        long prev = readLong(in);\n        int best = 1, cur = 0;\n"
            "        for (int i = 1; i < n; i++) {\n            long x = readLong(in);\n"
            "            cur = x > prev ? cur + 1 : 0;\n            best = Math.max(best, cur);\n"
            "            prev = x;\n        }\n        System.out.println(best);\n"
        ),
    },
    tags=("implementation", "two pointers"),
)


def _pairs_solve(text: str, p: dict[str, int]) -> str:
    v, k = _ints(text)[1:], p["K"]
    seen: dict[int, int] = {}
    pairs = 0
    for x in v:
        pairs += seen.get(k - x, 0)
        seen[x] = seen.get(x, 0) + 1
    return f"{pairs}\n"


PAIR_SUM = Template(
    name="pair-sum",
    title="Matching Tickets",
    params=lambda r: {"K": 2 * r.randint(5, 20)},
    task="Count the pairs i < j of tickets whose values add up to exactly {K}.",
    input_spec="The first line contains n (1 <= n <= 200000). The second line contains n "
    "integers a_i (0 <= a_i <= {K}).",
    output_spec="Print the number of pairs (i, j), i < j, with a_i + a_j = {K}.",
    make_input=lambda r, n, p: _array(r, n, 0, p["K"]),
    solve=_pairs_solve,
    correct={
        "python": PY_READ
        + "seen = {}\npairs = 0\nfor x in a:\n    pairs += seen.get(__K__ - x, 0)\n"
        "    seen[x] = seen.get(x, 0) + 1\nprint(pairs)\n",
        "cpp": CPP_HEAD + "    vector<long long> cnt(__K__ + 1, 0);\n    long long pairs = 0;\n"
        "    for (int i = 0; i < n; i++) {\n        int x;\n        cin >> x;\n"
        "        pairs += cnt[__K__ - x];\n        cnt[x]++;\n    }\n"
        '    cout << pairs << "\\n";\n    return 0;\n}\n',
        "java": _java(
            "        long[] cnt = new long[__K__ + 1];\n        long pairs = 0;\n"
            "        for (int i = 0; i < n; i++) {\n            int x = (int) readLong(in);\n"
            "            pairs += cnt[__K__ - x];\n            cnt[x]++;\n        }\n"
            "        System.out.println(pairs);\n"
        ),
    },
    wrong={
        "python": PY_READ + "seen = {}\npairs = 0\nfor x in a:\n    seen[x] = seen.get(x, 0) + 1\n"
        "    pairs += seen.get(__K__ - x, 0)\nprint(pairs)\n",
        "cpp": CPP_HEAD + "    vector<long long> cnt(__K__ + 1, 0);\n    vector<int> a(n);\n"
        "    for (auto& x : a) { cin >> x; cnt[x]++; }\n    long long pairs = 0;\n"
        "    for (int x : a) pairs += cnt[__K__ - x];\n"
        '    cout << pairs / 2 << "\\n";\n    return 0;\n}\n',
        "java": _java(
            "        int[] cnt = new int[__K__];\n        long pairs = 0;\n"
            "        for (int i = 0; i < n; i++) {\n            int x = (int) readLong(in);\n"
            "            pairs += cnt[__K__ - x];\n            cnt[x]++;\n        }\n"
            "        System.out.println(pairs);\n"
        ),
    },
    tags=("hashing", "counting"),
)


def _gcd_solve(text: str, p: dict[str, int]) -> str:
    g = 0
    for x in _ints(text)[1:]:
        g = gcd(g, x)
    return f"{g}\n"


def _gcd_input(r: random.Random, n: int, p: dict[str, int]) -> str:
    g = r.randint(1, p["G"])
    return f"{n}\n{' '.join(str(g * r.randint(1, 10**9 // p['G'])) for _ in range(n))}\n"


GCD_ALL = Template(
    name="gcd-all",
    title="Common Tile",
    params=lambda r: {"G": r.randint(2, 1000)},
    task="Find the largest tile length that divides every wall length.",
    input_spec="The first line contains n (1 <= n <= 200000). The second line contains n "
    "integers a_i (1 <= a_i <= 10^9).",
    output_spec="Print gcd(a_1, ..., a_n).",
    make_input=_gcd_input,
    solve=_gcd_solve,
    correct={
        "python": PY_READ + "import math\ng = 0\nfor x in a:\n    g = math.gcd(g, x)\nprint(g)\n",
        "cpp": CPP_HEAD + "    long long g = 0;\n    for (int i = 0; i < n; i++) {\n"
        "        long long x;\n        cin >> x;\n        g = __gcd(g, x);\n    }\n"
        '    cout << g << "\\n";\n    return 0;\n}\n',
        "java": _java(
            "        long g = 0;\n        for (int i = 0; i < n; i++) {\n"
            "            long x = readLong(in);\n            while (x != 0) { long t = g % x; g = x; x = t; }\n"
            "        }\n        System.out.println(g);\n"
        ),
    },
    wrong={
        "python": PY_READ + "import math\nprint(math.gcd(a[0], a[-1]))\n",
        "cpp": CPP_HEAD + "    long long g = 0;\n    for (int i = 0; i < n; i++) {\n"
        "        long long x;\n        cin >> x;\n        if (i < 2) g = __gcd(g, x);\n    }\n"
        '    cout << g << "\\n";\n    return 0;\n}\n',
        "java": _java(
            "        long g = Long.MAX_VALUE;\n        for (int i = 0; i < n; i++) g = Math.min(g, readLong(in));\n"
            "        System.out.println(g);\n"
        ),
    },
    tags=("math", "number theory"),
)


def _distinct_solve(text: str, p: dict[str, int]) -> str:
    return f"{len({x % p['P'] for x in _ints(text)[1:]})}\n"


DISTINCT_MOD = Template(
    name="distinct-mod",
    title="Clock Positions",
    params=lambda r: {"P": r.randint(5, 5000)},
    task="Each hand position a_i (possibly negative) points at a_i mod {P} on a clock of {P} "
    "marks numbered 0 to {P_minus_1}. Count the distinct marks pointed at.",
    input_spec="The first line contains n (1 <= n <= 200000). The second line contains n "
    "integers a_i (-10^9 <= a_i <= 10^9).",
    output_spec="Print the number of distinct values of a_i mod {P} (taken in [0, {P_minus_1}]).",
    make_input=lambda r, n, p: _array(r, n, -(10**9), 10**9),
    solve=_distinct_solve,
    correct={
        "python": PY_READ + "print(len({x % __P__ for x in a}))\n",
        "cpp": CPP_HEAD + "    vector<char> seen(__P__, 0);\n    int c = 0;\n"
        "    for (int i = 0; i < n; i++) {\n        long long x;\n        cin >> x;\n"
        "        int m = ((x % __P__) + __P__) % __P__;\n        if (!seen[m]) { seen[m] = 1; c++; }\n    }\n"
        '    cout << c << "\\n";\n    return 0;\n}\n',
        "java": _java(
            "        boolean[] seen = new boolean[__P__];\n        int c = 0;\n"
            "        for (int i = 0; i < n; i++) {\n            int m = (int) Math.floorMod(readLong(in), (long) __P__);\n"
            "            if (!seen[m]) { seen[m] = true; c++; }\n        }\n"
            "        System.out.println(c);\n"
        ),
    },
    wrong={
        "python": PY_READ + "print(len(set(a)))\n",
        "cpp": CPP_HEAD + "    set<long long> seen;\n    for (int i = 0; i < n; i++) {\n"
        "        long long x;\n        cin >> x;\n        seen.insert(x % __P__);\n    }\n"
        '    cout << seen.size() << "\\n";\n    return 0;\n}\n',
        "java": _java(
            "        HashSet<Long> seen = new HashSet<>();\n"
            "        for (int i = 0; i < n; i++) seen.add(readLong(in) % __P__);\n"
            "        System.out.println(seen.size());\n"
        ),
    },
    tags=("math", "hashing"),
)


def _range_input(r: random.Random, n: int, p: dict[str, int]) -> str:
    q = max(1, n // 2)
    lines = [f"{n} {q}", " ".join(str(r.randint(0, 10**9)) for _ in range(n))]
    for _ in range(q):
        a, b = sorted((r.randint(1, n), r.randint(1, n)))
        lines.append(f"{a} {b}")
    return "\n".join(lines) + "\n"


def _range_solve(text: str, p: dict[str, int]) -> str:
    v = _ints(text)
    n, q = v[0], v[1]
    a = v[2 : 2 + n]
    pre = [0]
    for x in a:
        pre.append(pre[-1] + x)
    qs = v[2 + n :]
    return "".join(f"{(pre[qs[2 * i + 1]] - pre[qs[2 * i] - 1]) % p['M']}\n" for i in range(q))


RANGE_SUMS = Template(
    name="range-sums",
    title="Shelf Weights",
    params=lambda r: {"M": r.randint(10**5, 10**9)},
    task="Answer q questions: the total weight of shelves l..r, modulo {M}.",
    input_spec="The first line contains n and q (1 <= n, q <= 200000). The second line contains "
    "n integers a_i (0 <= a_i <= 10^9). Each of the next q lines contains l and r "
    "(1 <= l <= r <= n).",
    output_spec="For each question print (a_l + ... + a_r) mod {M} on its own line.",
    make_input=_range_input,
    solve=_range_solve,
    correct={
        "python": "import sys\ndata = sys.stdin.buffer.read().split()\nn, q = int(data[0]), int(data[1])\n"
        "pre = [0]\nfor x in data[2:2 + n]:\n    pre.append(pre[-1] + int(x))\nout = []\n"
        "for i in range(q):\n    l, r = int(data[2 + n + 2 * i]), int(data[3 + n + 2 * i])\n"
        "    out.append((pre[r] - pre[l - 1]) % __M__)\nprint('\\n'.join(map(str, out)))\n",
        "cpp": "#include <bits/stdc++.h>\nusing namespace std;\nint main() {\n"
        "    ios::sync_with_stdio(false);\n    cin.tie(nullptr);\n    int n, q;\n    cin >> n >> q;\n"
        "    vector<long long> pre(n + 1, 0);\n    for (int i = 1; i <= n; i++) { long long x; cin >> x; pre[i] = pre[i - 1] + x; }\n"
        "    string out;\n    while (q--) {\n        int l, r;\n        cin >> l >> r;\n"
        '        out += to_string((pre[r] - pre[l - 1]) % __M__);\n        out += "\\n";\n    }\n'
        "    cout << out;\n    return 0;\n}\n",
        "java": _java(
            "        int q = (int) readLong(in);\n        long[] pre = new long[n + 1];\n"
            "        for (int i = 1; i <= n; i++) pre[i] = pre[i - 1] + readLong(in);\n"
            "        StringBuilder sb = new StringBuilder();\n        for (int i = 0; i < q; i++) {\n"
            "            int l = (int) readLong(in), r = (int) readLong(in);\n"
            "            sb.append((pre[r] - pre[l - 1]) % __M__).append('\\n');\n        }\n"
            "        System.out.print(sb);\n"
        ),
    },
    wrong={
        "python": "import sys\ndata = sys.stdin.buffer.read().split()\nn, q = int(data[0]), int(data[1])\n"
        "a = list(map(int, data[2:2 + n]))\nout = []\n"
        "for i in range(q):\n    l, r = int(data[2 + n + 2 * i]), int(data[3 + n + 2 * i])\n"
        "    out.append(sum(a[l:r]) % __M__)\nprint('\\n'.join(map(str, out)))\n",
        "cpp": "#include <bits/stdc++.h>\nusing namespace std;\nint main() {\n"
        "    ios::sync_with_stdio(false);\n    cin.tie(nullptr);\n    int n, q;\n    cin >> n >> q;\n"
        "    vector<int> pre(n + 1, 0);\n    for (int i = 1; i <= n; i++) { int x; cin >> x; pre[i] = pre[i - 1] + x; }\n"
        "    string out;\n    while (q--) {\n        int l, r;\n        cin >> l >> r;\n"
        '        out += to_string((pre[r] - pre[l - 1]) % __M__);\n        out += "\\n";\n    }\n'
        "    cout << out;\n    return 0;\n}\n",
        "java": _java(
            "        int q = (int) readLong(in);\n        long[] pre = new long[n + 1];\n"
            "        for (int i = 1; i <= n; i++) pre[i] = pre[i - 1] + readLong(in);\n"
            "        StringBuilder sb = new StringBuilder();\n        for (int i = 0; i < q; i++) {\n"
            "            int l = (int) readLong(in), r = (int) readLong(in);\n"
            "            sb.append((pre[r] - pre[l]) % __M__).append('\\n');\n        }\n"
            "        System.out.print(sb);\n"
        ),
    },
    tags=("prefix sums",),
)

TEMPLATES: tuple[Template, ...] = (
    SUM_MOD,
    COUNT_ABOVE,
    MAX_SUBARRAY,
    LONGEST_RUN,
    PAIR_SUM,
    GCD_ALL,
    DISTINCT_MOD,
    RANGE_SUMS,
)

# ---------------------------------------------------------------------- the draws
WORDS = (  # noqa: SIM905 - a sentence reads better than a list of words
    "the village keeps a record of every market day and the traders compare their notes "
    "before the caravan leaves at dawn while the archivist checks each entry twice because "
    "an error in the ledger would cost the guild its licence for a season and nobody wants "
    "to explain that to the council which meets only when the river is low enough to cross"
).split()


def _filled(text: str, params: dict[str, int]) -> str:
    values = {**params, **{f"{k}_minus_1": v - 1 for k, v in params.items()}}
    return text.format(**values)


def _source(code: str, params: dict[str, int]) -> str:
    for k, v in params.items():
        code = code.replace(f"__{k}__", str(v))
    return code


def _story(rng: random.Random) -> str:
    target = int(math.exp(rng.gauss(math.log(900), 0.4)))
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < target:
        words.append(rng.choice(WORDS))
    return " ".join(words).capitalize() + "."


def _test_size(rng: random.Random, max_n: int) -> int:
    band = rng.random()
    if band < 0.3:
        return rng.randint(1, 10)
    lo, hi = (10, 1000) if band < 0.8 else (1000, max_n)
    return int(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def problem(
    index: int, seed: int, *, tests_median: int = 10, max_n: int = 20_000
) -> dict[str, Any]:
    """Problem `index` of the corpus drawn with `seed`: a CodeContests row."""
    rng = random.Random(f"{seed}:{index}")
    t = TEMPLATES[index % len(TEMPLATES)]
    params = t.params(rng)
    example = t.make_input(rng, rng.randint(3, 8), params)
    n_private = rng.randint(1, 3)
    n_generated = min(
        40, max(2, round(math.exp(rng.gauss(math.log(max(tests_median - 3, 1)), 0.5))))
    )
    private = [t.make_input(rng, _test_size(rng, max_n), params) for _ in range(n_private)]
    generated = [t.make_input(rng, _test_size(rng, max_n), params) for _ in range(n_generated)]
    statement = (
        f"{_story(rng)} {_filled(t.task, params)}\n\nInput\n\n{_filled(t.input_spec, params)}\n\n"
        f"Output\n\n{_filled(t.output_spec, params)}\n\nExamples\n\nInput\n\n{example}\n"
        f"Output\n\n{t.solve(example, params)}"
    )
    solutions = [(lang, _source(code, params)) for lang, code in t.correct.items()]
    wrong = [(lang, _source(code, params)) for lang, code in t.wrong.items() if rng.random() < 0.7]
    if not wrong:  # at least one plausible wrong program per problem
        lang = rng.choice(sorted(t.wrong))
        wrong = [(lang, _source(t.wrong[lang], params))]

    def block(programs: list[tuple[str, str]]) -> dict[str, list[Any]]:
        return {
            "language": [LANG_CODES[lang] for lang, _ in programs],
            "solution": [code for _, code in programs],
        }

    def io(cases: list[str]) -> dict[str, list[str]]:
        return {"input": cases, "output": [t.solve(c, params) for c in cases]}

    return {
        "name": f"synthetic-{seed}-{index:05d}-{t.name}",
        "description": statement,
        "public_tests": io([example]),
        "private_tests": io(private),
        "generated_tests": io(generated),
        "solutions": block(solutions),
        "incorrect_solutions": block(wrong),
        "time_limit": {"seconds": rng.randint(1, 3), "nanos": 0},
        "memory_limit_bytes": 256 * 2**20,
        "difficulty": rng.randint(1, 3),
        "source": 2,  # codeforces
        "cf_rating": rng.randrange(800, 3001, 100),
        "cf_tags": list(t.tags),
        "input_file": "",
        "output_file": "",
    }


def write_corpus(
    n: int, path: Path, seed: int = 0, *, tests_median: int = 10, max_n: int = 20_000
) -> Path:
    """Write `n` problems to `path` (Parquet; the source `code_contests:PATH`)."""
    rows = [problem(i, seed, tests_median=tests_median, max_n=max_n) for i in range(n)]
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path, compression="zstd")
    return path


def problems_at(scale: float) -> int:
    """Problems at scale factor `scale`: `scale` x the demo's problem count, at least 2."""
    return max(2, round(scale * DEMO_PROBLEMS))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--problems", type=int, default=DEMO_PROBLEMS)
    ap.add_argument("-o", "--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tests-median", type=int, default=10)
    ap.add_argument("--max-n", type=int, default=20_000)
    a = ap.parse_args()
    write_corpus(a.problems, a.out, a.seed, tests_median=a.tests_median, max_n=a.max_n)
    print(f"{a.problems} problems -> {a.out}")


if __name__ == "__main__":
    main()
