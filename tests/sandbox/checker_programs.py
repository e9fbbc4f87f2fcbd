"""Checkers of our own, written to testlib's conventions (testlib.h itself is not ours to ship):
run as `checker INPUT OUTPUT ANSWER`, exit 0 ok, 1 wrong answer, 2 presentation error,
3 checker failure, 7 points (message `points P` on stderr).

The problem they judge: read n, print any two non-negative integers x y with x + y = n. The answer
file holds one valid pair, so a token compare would reject most correct outputs.
"""

from __future__ import annotations

SPLIT_CHECKER = r"""
#include <cstdio>
int main(int argc, char **argv) {
    if (argc < 4) return 3;
    FILE *inf = fopen(argv[1], "r"), *ouf = fopen(argv[2], "r"), *ans = fopen(argv[3], "r");
    if (!inf || !ouf || !ans) return 3;
    long long n, ax, ay, x, y;
    if (fscanf(inf, "%lld", &n) != 1 || fscanf(ans, "%lld %lld", &ax, &ay) != 2) return 3;
    if (ax + ay != n) { fprintf(stderr, "the answer file is wrong"); return 3; }
    if (fscanf(ouf, "%lld %lld", &x, &y) != 2) { fprintf(stderr, "expected two integers"); return 2; }
    char extra;
    if (fscanf(ouf, " %c", &extra) == 1) { fprintf(stderr, "extra output"); return 2; }
    if (x < 0 || y < 0 || x + y != n) { fprintf(stderr, "%lld + %lld != %lld", x, y, n); return 1; }
    return 0;
}
"""

# Partial credit: a pair with x == y earns `points 1`, any other valid pair `points 0.5`.
POINTS_CHECKER = r"""
#include <cstdio>
int main(int argc, char **argv) {
    FILE *inf = fopen(argv[1], "r"), *ouf = fopen(argv[2], "r");
    long long n, x, y;
    if (fscanf(inf, "%lld", &n) != 1) return 3;
    if (fscanf(ouf, "%lld %lld", &x, &y) != 2 || x + y != n) return 1;
    fprintf(stderr, x == y ? "points 1\n" : "points 0.5\n");
    return 7;
}
"""

# The split problem's checker written against testlib.h itself (the file the engines take from
# sandbox/testlib.py; never in this repository): the way most contest checkers are written.
SPLIT_TESTLIB_CHECKER = r"""
#include "testlib.h"
int main(int argc, char *argv[]) {
    registerTestlibCmd(argc, argv);
    long long n = inf.readLong();
    long long ax = ans.readLong(), ay = ans.readLong();
    if (ax + ay != n) quitf(_fail, "the answer file is wrong");
    long long x = ouf.readLong(0, n, "x"), y = ouf.readLong(0, n, "y");
    if (x + y != n) quitf(_wa, "%lld + %lld != %lld", x, y, n);
    quitf(_ok, "%lld + %lld = %lld", x, y, n);
}
"""

NEEDS_TESTLIB = '#include "testlib.h"\nint main(int argc, char *argv[]) { registerTestlibCmd(argc, argv); quitf(_ok, "ok"); }\n'
BROKEN_CHECKER = "int main(int argc, char **argv) { return undeclared_name; }\n"

SPLIT_TESTS = [("10\n", "1 9\n"), ("7\n", "3 4\n")]
SPLIT_HALF = "n = int(input())\nprint(n // 2, n - n // 2)\n"  # valid, never the answer file's pair
SPLIT_OFF_BY_ONE = "n = int(input())\nprint(n // 2, n - n // 2 + 1)\n"  # WA
SPLIT_GARBAGE = "print('many ways')\n"  # presentation error: a reject
SPLIT_EVEN = "n = int(input())\nprint(n // 2, n - n // 2)\n"
