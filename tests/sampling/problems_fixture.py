"""Small self-made problems for sampling and judging tests (no dependency on other packages' data)."""

from __future__ import annotations

from schemas.ids import problem_id_for
from schemas.problem import Problem, Solution, TestCase

SUM_PY = "a, b = map(int, input().split())\nprint(a + b)\n"
SUM_PY_WRONG = "a, b = map(int, input().split())\nprint(a - b)\n"
SUM_CPP = (
    "#include <bits/stdc++.h>\nusing namespace std;\n"
    "int main() { long long a, b; cin >> a >> b; cout << a + b << endl; return 0; }\n"
)
SUM_JAVA = (
    "import java.util.*;\npublic class Main { public static void main(String[] x) {"
    " Scanner s = new Scanner(System.in); long a = s.nextLong(); long b = s.nextLong();"
    " System.out.println(a + b); } }\n"
)
# Sum of a list; edge case: an empty list prints 0, and values need 64 bits.
ABS_PY = (
    "n = int(input())\nif n == 0:\n    print(0)\n    exit()\n"
    "xs = list(map(int, input().split()))\ntotal = 0\nfor i in range(0, n):\n"
    "    if xs[i] > 0:\n        total += xs[i]\n    else:\n        total -= xs[i]\nprint(total)\n"
)


def sum_problem() -> Problem:
    return Problem(
        problem_id=problem_id_for("test", "sum"),
        source="test",
        source_id="sum",
        title="Sum",
        statement="Read two integers a and b and print a + b.",
        test_mode="stdio",
        tests=[
            TestCase(input="1 2\n", output="3\n"),
            TestCase(input="-5 5\n", output="0\n"),
            TestCase(input="3000000000 3000000000\n", output="6000000000\n"),
        ],
        solutions=[
            Solution(language="python", code=SUM_PY, correct=True),
            Solution(language="python", code=SUM_PY_WRONG, correct=False),
            Solution(language="cpp", code=SUM_CPP, correct=True),
            Solution(language="java", code=SUM_JAVA, correct=True),
        ],
    )


def abs_problem() -> Problem:
    return Problem(
        problem_id=problem_id_for("test", "abs-sum"),
        source="test",
        source_id="abs-sum",
        title="Absolute sum",
        statement="Read n and n integers; print the sum of their absolute values.",
        test_mode="stdio",
        tests=[
            TestCase(input="0\n\n", output="0\n"),
            TestCase(input="3\n1 -2 3\n", output="6\n"),
            TestCase(input="2\n-4 -4\n", output="8\n"),
            TestCase(input="1\n7\n", output="7\n"),
        ],
        solutions=[Solution(language="python", code=ABS_PY, correct=True)],
    )


def function_problem() -> Problem:
    return Problem(
        problem_id=problem_id_for("test", "double"),
        source="test",
        source_id="double",
        statement="Write double(x) returning 2 * x.",
        test_mode="function",
        entry_point="double",
        starter_code="def double(x: int) -> int:",
        tests=[TestCase(code="assert double(2) == 4"), TestCase(code="assert double(-1) == -2")],
        solutions=[
            Solution(language="python", code="def double(x):\n    return 2 * x\n", correct=True)
        ],
    )
