"""Checker for two-tickets: python3 checker.py INPUT EXPECTED ACTUAL; exit 0 accept, 1 reject.

Any pair i < j with a_i + a_j = T is accepted; -1 is accepted only when the reference found
no pair. A valid pair where the reference printed -1 means the reference is wrong: exit 2.
"""

import sys


def read_tokens(path: str) -> list[str]:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().split()


def main() -> int:
    given = read_tokens(sys.argv[1])
    expected = read_tokens(sys.argv[2])
    actual = read_tokens(sys.argv[3])
    n, target = int(given[0]), int(given[1])
    a = [int(x) for x in given[2 : 2 + n]]
    if actual == ["-1"]:
        return 0 if expected == ["-1"] else 1
    if len(actual) != 2:
        return 1
    try:
        i, j = int(actual[0]), int(actual[1])
    except ValueError:
        return 1
    if not (1 <= i < j <= n) or a[i - 1] + a[j - 1] != target:
        return 1
    return 2 if expected == ["-1"] else 0


sys.exit(main())
