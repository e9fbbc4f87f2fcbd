"""Source-shaped fixture files: a few rows per source, laid out as each source publishes them.

The column names, nesting and encodings follow the published datasets
(deepmind/code_contests parquet, BAAI/TACO parquet, codeparrot/apps jsonl,
livecodebench/code_generation_lite jsonl, open-r1/codeforces parquet); the
contents are small problems written for these tests.
"""

from __future__ import annotations

import base64
import json
import pickle
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

# ---- deepmind/code_contests ---------------------------------------------------------

_CC_TESTS = pa.struct([("input", pa.list_(pa.string())), ("output", pa.list_(pa.string()))])
_CC_SOLS = pa.struct([("language", pa.list_(pa.int64())), ("solution", pa.list_(pa.string()))])
CODE_CONTESTS_SCHEMA = pa.schema(
    [
        ("name", pa.string()),
        ("description", pa.string()),
        ("public_tests", _CC_TESTS),
        ("private_tests", _CC_TESTS),
        ("generated_tests", _CC_TESTS),
        ("source", pa.int64()),
        ("difficulty", pa.int64()),
        ("solutions", _CC_SOLS),
        ("incorrect_solutions", _CC_SOLS),
        ("cf_contest_id", pa.int64()),
        ("cf_index", pa.string()),
        ("cf_points", pa.float64()),
        ("cf_rating", pa.int64()),
        ("cf_tags", pa.list_(pa.string())),
        ("is_description_translated", pa.bool_()),
        ("untranslated_description", pa.string()),
        ("time_limit", pa.struct([("seconds", pa.int64()), ("nanos", pa.int64())])),
        ("memory_limit_bytes", pa.int64()),
        ("input_file", pa.string()),
        ("output_file", pa.string()),
    ]
)


def _cc_row(name: str, **over) -> dict:
    row = {
        "name": name,
        "description": "Given two integers a and b, print their sum.\n\nInput\n\nOne line with a and b.\n\n"
        "Output\n\nPrint a+b.\n\nExamples\n\nInput\n\n1 2\n\nOutput\n\n3\n",
        "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
        "private_tests": {"input": ["5 7\n", "-1 1\n"], "output": ["12\n", "0\n"]},
        "generated_tests": {"input": ["100 200\n"], "output": ["300\n"]},
        "source": 2,
        "difficulty": 7,
        "solutions": {
            "language": [3, 2, 4, 1, 0],
            "solution": [
                "a,b=map(int,input().split());print(a+b)",
                '#include <cstdio>\nint main(){long long a,b;scanf("%lld %lld",&a,&b);printf("%lld\\n",a+b);}',
                "import java.util.*;public class Main{public static void main(String[] x){Scanner s=new Scanner(System.in);System.out.println(s.nextLong()+s.nextLong());}}",
                "print input()",
                "???",
            ],
        },
        "incorrect_solutions": {"language": [3], "solution": ["print(0)"]},
        "cf_contest_id": 1,
        "cf_index": "A",
        "cf_points": 500.0,
        "cf_rating": 800,
        "cf_tags": ["math", "implementation"],
        "is_description_translated": False,
        "untranslated_description": "",
        "time_limit": {"seconds": 1, "nanos": 500000000},
        "memory_limit_bytes": 256 * 2**20,
        "input_file": "",
        "output_file": "",
    }
    row.update(over)
    return row


@pytest.fixture
def code_contests_file(tmp_path: Path) -> Path:
    rows = [
        _cc_row("1_A. Sum"),
        _cc_row(
            "2_B. No tests",
            public_tests={"input": [], "output": []},
            private_tests={"input": [], "output": []},
            generated_tests={"input": [], "output": []},
        ),
        _cc_row("3_C. Absurd", time_limit={"seconds": 3600, "nanos": 0}),
        _cc_row("4_D. Empty", description="   "),
        _cc_row("5_E. No limit", time_limit=None, memory_limit_bytes=0),
    ]
    path = tmp_path / "code_contests" / "train-00000-of-00001.parquet"
    path.parent.mkdir()
    pq.write_table(pa.Table.from_pylist(rows, schema=CODE_CONTESTS_SCHEMA), path)
    return path


# ---- BAAI/TACO and codeparrot/apps ---------------------------------------------------


def _apps_like(question: str, io: dict | str, **extra) -> dict:
    return {
        "question": question,
        "solutions": json.dumps(["n=int(input())\nprint(n*2)"]),
        "starter_code": "",
        "input_output": io if isinstance(io, str) else json.dumps(io),
        "difficulty": "EASY",
        **extra,
    }


TACO_ROWS = [
    _apps_like(
        "Double the number n read from input.",
        {"inputs": ["3\n", "0\n", ["5"]], "outputs": ["6\n", "0\n", ["10"]]},
        name="Double",
        source="codechef",
        tags="['Mathematics']",
        skill_types="[]",
        url="https://example.org/p1",
        **{"Expected Auxiliary Space": None},
        time_limit="1 seconds",
        date="2021-03-11",
        picture_num="0",
        memory_limit="256 megabytes",
        **{"Expected Time Complexity": None},
        raw_tags="['Math']",
    ),
    {
        **_apps_like(
            "Return the sum of a list.",
            {"fn_name": "list_sum", "inputs": [[[1, 2, 3]], [[]]], "outputs": [[6], [0]]},
        ),
        "starter_code": "def list_sum(xs):\n\t",
        "name": "",
        "source": "codewars",
        "tags": "[]",
        "skill_types": "[]",
        "url": "",
        "Expected Auxiliary Space": None,
        "time_limit": None,
        "date": None,
        "picture_num": "0",
        "memory_limit": None,
        "Expected Time Complexity": None,
        "raw_tags": "[]",
    },
    {
        **_apps_like("Broken row.", "{not json"),
        "name": "",
        "source": "x",
        "tags": "[]",
        "skill_types": "[]",
        "url": "",
        "Expected Auxiliary Space": None,
        "time_limit": None,
        "date": None,
        "picture_num": "0",
        "memory_limit": None,
        "Expected Time Complexity": None,
        "raw_tags": "[]",
    },
]


@pytest.fixture
def taco_file(tmp_path: Path) -> Path:
    path = tmp_path / "taco" / "train-00000-of-00009.parquet"
    path.parent.mkdir()
    pq.write_table(pa.Table.from_pylist(TACO_ROWS), path)
    return path


@pytest.fixture
def apps_file(tmp_path: Path) -> Path:
    rows = [
        {
            "problem_id": 0,
            **_apps_like("Print twice n.", {"inputs": ["2\n"], "outputs": ["4\n"]}),
            "difficulty": "introductory",
            "url": "https://codeforces.com/problemset/problem/1/A",
        },
        {
            "problem_id": 1,
            **_apps_like(
                "Implement twoSum.",
                {"fn_name": "twoSum", "inputs": [[[2, 7, 11, 15], 9]], "outputs": [[[0, 1]]]},
            ),
            "starter_code": "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        ",
            "difficulty": "interview",
            "url": "https://leetcode.com/problems/two-sum/",
        },
        {
            "problem_id": 2,
            **_apps_like("Missing outputs.", {"inputs": ["1\n"], "outputs": [None]}),
            "difficulty": "competition",
            "url": "",
        },
    ]
    path = tmp_path / "apps" / "train.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# ---- livecodebench/code_generation_lite ----------------------------------------------


def lcb_compress(cases: list[dict]) -> str:
    """How LiveCodeBench stores large private test sets: base64(zlib(pickle(json text)))."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(cases)))).decode()


class _Evil:
    def __reduce__(self):  # what a hostile payload looks like: a callable to run on load
        import os

        return (os.system, ("touch /tmp/aletheia-pwned-by-pickle",))


def _lcb_row(qid: str, **over) -> dict:
    row = {
        "question_title": "Sum of pair",
        "question_content": "You are given A and B. Print A+B.\n\nSample Input 1\n\n1 2\n\nSample Output 1\n\n3\n\nConstraints\n\n1 <= A, B <= 100",
        "platform": "atcoder",
        "question_id": qid,
        "contest_id": "abc999",
        "contest_date": "2024-05-04T00:00:00",
        "starter_code": "",
        "difficulty": "easy",
        "public_test_cases": json.dumps([{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]),
        "private_test_cases": lcb_compress(
            [{"input": "5 5\n", "output": "10\n", "testtype": "stdin"}]
        ),
        "metadata": "{}",
    }
    row.update(over)
    return row


LCB_ROWS = [
    _lcb_row("abc999_a"),
    _lcb_row(
        "2999",
        platform="leetcode",
        question_title="max-of-array",
        question_content="Given an integer array nums, return its maximum.\n\nExample 1:\n\nInput: nums = [1,5]\nOutput: 5\n\nConstraints:\n\n1 <= nums.length <= 100",
        starter_code="class Solution:\n    def maxOf(self, nums: List[int]) -> int:\n        ",
        public_test_cases=json.dumps(
            [{"input": "[1, 5]", "output": "5", "testtype": "functional"}]
        ),
        private_test_cases=json.dumps([{"input": "[7]", "output": "7", "testtype": "functional"}]),
        metadata=json.dumps({"func_name": "maxOf"}),
        contest_date="2024-06-01T00:00:00",
    ),
    _lcb_row(
        "abc999_b",
        private_test_cases=base64.b64encode(zlib.compress(pickle.dumps(_Evil()))).decode(),
    ),
    _lcb_row("abc999_c", private_test_cases="!!!not base64 nor json!!!"),
]


@pytest.fixture
def lcb_file(tmp_path: Path) -> Path:
    path = tmp_path / "lcb" / "test6.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(r) + "\n" for r in LCB_ROWS))
    return path


# ---- open-r1/codeforces ---------------------------------------------------------------

_IO = pa.list_(pa.struct([("input", pa.string()), ("output", pa.string())]))
CODEFORCES_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("aliases", pa.list_(pa.string())),
        ("contest_id", pa.string()),
        ("contest_name", pa.string()),
        ("contest_type", pa.string()),
        ("contest_start", pa.int64()),
        ("contest_start_year", pa.int64()),
        ("index", pa.string()),
        ("time_limit", pa.float64()),
        ("memory_limit", pa.float64()),
        ("title", pa.string()),
        ("description", pa.string()),
        ("input_format", pa.string()),
        ("output_format", pa.string()),
        ("interaction_format", pa.string()),
        ("note", pa.string()),
        ("examples", _IO),
        ("editorial", pa.string()),
        ("rating", pa.float64()),
        ("tags", pa.list_(pa.string())),
        ("testset_size", pa.int64()),
        ("official_tests", _IO),
        ("official_tests_complete", pa.bool_()),
        ("input_mode", pa.string()),
        ("generated_checker", pa.string()),
        ("executable", pa.bool_()),
    ]
)


def _cf_row(pid: str, **over) -> dict:
    row = {
        "id": pid,
        "aliases": None,
        "contest_id": pid.split("/")[0],
        "contest_name": "Round 1",
        "contest_type": "CF",
        "contest_start": 1735689600,
        "contest_start_year": 2025,
        "index": pid.split("/")[1],
        "time_limit": 2.0,
        "memory_limit": 256.0,
        "title": "Min",
        "description": "Print the minimum of n numbers.",
        "input_format": "n, then n numbers.",
        "output_format": "The minimum.",
        "interaction_format": None,
        "note": "In the first test the answer is 1.",
        "examples": [{"input": "2\n1 2\n", "output": "1\n"}],
        "editorial": None,
        "rating": 800.0,
        "tags": ["implementation"],
        "testset_size": 3,
        "official_tests": [
            {"input": "2\n1 2\n", "output": "1\n"},
            {"input": "1\n-5\n", "output": "-5\n"},
        ],
        "official_tests_complete": True,
        "input_mode": "stdio",
        "generated_checker": None,
        "executable": True,
    }
    row.update(over)
    return row


@pytest.fixture
def codeforces_file(tmp_path: Path) -> Path:
    rows = [
        _cf_row("2000/A"),
        _cf_row("2000/B", generated_checker="import sys\n# checker\nsys.exit(0)\n"),
        _cf_row("2000/C", input_mode="file"),
        _cf_row("2000/D", interaction_format="Interact with the jury."),
        _cf_row("2000/E", official_tests=[], official_tests_complete=False),
        _cf_row("2000/F", memory_limit=1e9),
    ]
    path = tmp_path / "codeforces" / "train-00000-of-00011.parquet"
    path.parent.mkdir()
    pq.write_table(pa.Table.from_pylist(rows, schema=CODEFORCES_SCHEMA), path)
    return path


SCORE_CHECKER = """import sys
numbers = open(sys.argv[1]).read().split()[1:]
answer = open(sys.argv[3]).read().split()
# any position of a minimum is fine; the checker prints a score (1 = accepted)
print(1 if len(answer) == 1 and answer[0] in numbers and int(answer[0]) == min(map(int, numbers)) else 0)
"""


@pytest.fixture
def codeforces_checker_file(tmp_path: Path) -> Path:
    path = tmp_path / "codeforces_checker" / "train-00000-of-00001.parquet"
    path.parent.mkdir()
    row = _cf_row(
        "2001/A",
        generated_checker=SCORE_CHECKER,
        official_tests=[
            {"input": "3\n4 2 9\n", "output": "2\n"},
            {"input": "1\n7\n", "output": "7\n"},
        ],
    )
    pq.write_table(pa.Table.from_pylist([row], schema=CODEFORCES_SCHEMA), path)
    return path
