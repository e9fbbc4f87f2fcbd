"""Synthetic judged-candidate tables (schema-exact) for unit tests and the assembly benchmark.

The programs are stand-ins (distinct one-liners), the verdicts are drawn, not executed:
use these only where what is measured is the table logic, never for invariants that need
real verdicts (those tests judge the bundled problems in the sandbox).
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl

from schemas.ids import problem_id_for
from schemas.problem import PROBLEM_SCHEMA, SPLIT_ASSIGNMENT_SCHEMA
from schemas.verdict import JUDGED_CANDIDATE_SCHEMA

_CODE = {
    "python": "x = {k}\nprint(x)  # candidate\n",
    "cpp": '#include <cstdio>\nint main() { printf("%d", {k}); }\n',
    "java": "public class Main { public static void main(String[] a) { System.out.print({k}); } }\n",
}


def synthetic_judged(
    n_candidates: int,
    *,
    n_problems: int,
    generators: tuple[str, ...] = ("gen-a", "gen-b"),
    languages: tuple[str, ...] = ("python", "cpp", "java"),
    tests_per_problem: int = 10,
    p_correct: float = 0.25,
    p_se: float = 0.01,
    strong_share: float = 0.3,
    seed: int = 0,
) -> pl.DataFrame:
    """`n_candidates` judged candidates over `n_problems` problems, in JUDGED_CANDIDATE_SCHEMA."""
    rng = np.random.default_rng(seed)
    n = n_candidates
    problem = rng.integers(0, n_problems, n)
    gen = rng.integers(0, len(generators), n)
    lang = rng.integers(0, len(languages), n)
    correct = rng.random(n) < p_correct
    se = (rng.random(n) < p_se) & ~correct
    passed = np.where(correct, tests_per_problem, rng.integers(0, tests_per_problem, n))
    passed = np.where(se, 0, passed)
    verdict = np.where(
        correct, "AC", np.where(se, "SE", np.where(rng.random(n) < 0.8, "WA", "TLE"))
    )
    tier = np.where(rng.random(n) < strong_share, "strong", "weak")
    langs = np.asarray(languages)[lang]
    codes = [_CODE[lng].replace("{k}", str(i)) for i, lng in enumerate(langs.tolist())]
    ids = [f"c_{i:016x}" for i in rng.permutation(n)]  # sha-like hex ids, unique
    gens = np.asarray(generators)[gen]
    pids = np.asarray([problem_id_for("synthetic", str(p)) for p in range(n_problems)])[problem]
    empty_f: list[float] = []
    frame = pl.DataFrame(
        {
            "candidate_id": ids,
            "problem_id": pids,
            "language": langs,
            "code": codes,
            "completion": None,
            "extraction": "ok",
            "origin": "policy",
            "generator": gens,
            "generator_revision": None,
            "tier": tier,
            "backend": "synthetic",
            "temperature": 1.0,
            "top_p": 1.0,
            "max_tokens": 1024,
            "seed": seed,
            "sample_index": 0,
            "prompt_sha": None,
            "prompt_tokens": None,
            "completion_tokens": None,
            "finish_reason": "stop",
            "parent_candidate_id": None,
            "mutation": None,
            "reference_correct": None,
            "verdict": verdict,
            "passed": passed.astype(np.int32),
            "total": np.full(n, tests_per_problem, dtype=np.int32),
            "pass_rate": passed / tests_per_problem,
            "test_verdicts": [[]] * n,
            "test_times_s": [empty_f] * n,
            "test_memory_kb": [[]] * n,
            "compile_output": None,
            "sandbox_image": "synthetic",
            "time_limit_s": 2.0,
            "memory_limit_mb": 256,
            "judge_cache_key": ids,
            "judge_stamp": "synthetic",
        },
        schema_overrides={"test_verdicts": pl.List(pl.String), "test_memory_kb": pl.List(pl.Int64)},
    )
    return pl.from_arrow(frame.to_arrow().cast(JUDGED_CANDIDATE_SCHEMA))  # type: ignore[return-value]


def synthetic_problems(
    n_problems: int, heldout_share: float = 0.3, seed: int = 0
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Problems (PROBLEM_SCHEMA) and split assignments matching `synthetic_judged`'s ids."""
    rng = np.random.default_rng(seed + 1)
    pids = [problem_id_for("synthetic", str(p)) for p in range(n_problems)]
    rows = [
        {
            "problem_id": pid,
            "source": "synthetic",
            "source_id": str(i),
            "title": f"Problem {i}",
            "statement": f"Print the number for problem {i}.",
            "prompt_statement": f"Print the number for problem {i}.",
            "test_mode": "stdio",
            "tests": [{"input": "", "output": str(i), "code": None}],
            "entry_point": None,
            "starter_code": None,
            "time_limit_s": 2.0,
            "memory_limit_mb": 256,
            "compare_mode": "tokens",
            "float_abs_tol": None,
            "float_rel_tol": None,
            "checker": None,
            "contest_date": dt.date(2024, 1, 1),
            "difficulty": None,
            "tags": [],
            "solutions": [],
            "license": "synthetic",
        }
        for i, pid in enumerate(pids)
    ]
    import pyarrow as pa

    problems = pl.from_arrow(pa.Table.from_pylist(rows, schema=PROBLEM_SCHEMA))
    split = np.where(rng.random(n_problems) < heldout_share, "heldout", "train")
    assignments = pl.from_arrow(
        pa.Table.from_pydict(
            {
                "problem_id": pids,
                "cluster_id": pids,
                "split": split.tolist(),
                "reason": [None] * n_problems,
            },
            schema=SPLIT_ASSIGNMENT_SCHEMA,
        )
    )
    return problems, assignments  # type: ignore[return-value]


_DEFAULTS: dict[str, object] = {
    "completion": None,
    "extraction": "ok",
    "origin": "policy",
    "generator": "gen-a",
    "generator_revision": None,
    "tier": "weak",
    "backend": None,
    "temperature": None,
    "top_p": None,
    "max_tokens": None,
    "seed": None,
    "sample_index": 0,
    "prompt_sha": None,
    "prompt_tokens": None,
    "completion_tokens": None,
    "finish_reason": None,
    "parent_candidate_id": None,
    "mutation": None,
    "reference_correct": None,
    "test_verdicts": [],
    "test_times_s": [],
    "test_memory_kb": [],
    "compile_output": None,
    "sandbox_image": "synthetic",
    "time_limit_s": 2.0,
    "memory_limit_mb": 256,
    "judge_stamp": "synthetic",
}


def judged_frame(rows: list[dict[str, object]], total: int = 10) -> pl.DataFrame:
    """Judged candidates from short dicts: give problem_id, language, code, verdict, passed
    (and anything else to override); ids and the rest are filled in consistently."""
    import pyarrow as pa

    from schemas.ids import candidate_id_for

    full = []
    for r in rows:
        row = {**_DEFAULTS, "total": total, **r}
        row.setdefault("candidate_id", candidate_id_for(str(row["language"]), str(row["code"])))
        row.setdefault("pass_rate", int(row["passed"]) / int(row["total"]) if row["total"] else 0.0)  # type: ignore[arg-type]
        row.setdefault("judge_cache_key", row["candidate_id"])
        full.append(row)
    return pl.from_arrow(pa.Table.from_pylist(full, schema=JUDGED_CANDIDATE_SCHEMA))  # type: ignore[return-value]
