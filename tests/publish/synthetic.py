"""A small, valid build folder made directly from the schemas (no stages needed), for the
publishing tests. Every row satisfies the invariants; tests break one on purpose."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa

from pipeline.common.parquet import write_parquet
from pipeline.common.verifier_prompt import build_messages, preference_turns
from pipeline.publish.layout import BuildManifest
from schemas import (
    ANSWER_LETTERS,
    DPO_SCHEMA,
    INSTANCE_SCHEMA,
    SPLIT_ASSIGNMENT_SCHEMA,
    TRAIN_QUESTIONS_SCHEMA,
)
from schemas.dataset_configs import CONFIGS

# Evaluation configs given a separate `test` table (Adv has none: it is published with
# test = full, as a build makes it), and its size.
WITH_TEST = ("heldout", "strong", "hard")
TEST_ROWS = 4

WORDS = [
    "array",
    "graph",
    "string",
    "tree",
    "query",
    "prefix",
    "suffix",
    "modulo",
    "prime",
    "matrix",
    "path",
    "sum",
    "interval",
    "segment",
    "greedy",
    "binary",
    "search",
    "sort",
    "stack",
    "queue",
    "heap",
    "bit",
    "mask",
]


def statement(rng: random.Random, i: int) -> str:
    return f"Problem {i}: " + " ".join(rng.choice(WORDS) for _ in range(60))


def instance(rng: random.Random, pid: str, query: str, split: str, k: int) -> dict:
    n = rng.randint(2, 5)
    pos = rng.randrange(n)
    verdicts = [("AC" if j == pos else rng.choice(["WA", "TLE", "RE"])) for j in range(n)]
    rates = [1.0 if v == "AC" else round(rng.random() * 0.9, 3) for v in verdicts]
    langs = [rng.choice(["python", "cpp", "java"]) for _ in range(n)]
    return {
        "prompt_id": pid,
        "instance_id": f"i_{split}_{k}",
        "query": query,
        "generator": "reference:bundled",
        "language": langs[0] if len(set(langs)) == 1 else "mixed",
        "num_candidates": n,
        "candidates": [f"print({j})" for j in range(n)],
        "chosen_position": pos,
        "chosen_answer": ANSWER_LETTERS[pos],
        "pass_rates": rates,
        "easy_hard": "easy",
        "weak_strong": "strong" if split == "strong" else "weak",
        "source": "bundled",
        "modification": None,
        "source_instance_id": None,
        "problem_id": pid,
        "candidate_ids": [f"c_{k}_{j}" for j in range(n)],
        "candidate_origins": [rng.choice(["reference", "mutant"]) for _ in range(n)],
        "candidate_generators": ["reference:bundled"] * n,
        "candidate_languages": langs,
        "verdicts": verdicts,
        "adversarial": [None] * n,
        "split": split,
        "build_id": "b_test",
    }


def dpo_row(inst: dict) -> dict:
    """A Think pair in the published format: the verifier prompt's turns without the
    `<think>` pre-fill, the responses as assistant turns starting with it."""
    gold = inst["chosen_answer"]
    wrong = next(a for a in ANSWER_LETTERS[: inst["num_candidates"]] if a != gold)
    messages = build_messages(inst["query"], inst["candidates"], inst["candidate_languages"])
    prompt, chosen = preference_turns(
        messages, f"<think>\nChecking each candidate...\n</think>\n\\boxed{{{gold}}}"
    )
    _, rejected = preference_turns(messages, f"<think>\nI think so.\n</think>\n\\boxed{{{wrong}}}")
    return inst | {
        "prompt": prompt,
        "chosen": chosen,
        "rejected": rejected,
        "chosen_source": "sampled",
        "rejected_answer": wrong,
        "judge_model": "tiny-qwen2",
        "rejected_judge_model": "tiny-qwen2",
        "prompt_variant": "think",
    }


def make_build(root: Path, seed: int = 0, rows: int = 6) -> Path:
    """Write a build folder with all nine configs; returns it."""
    rng = random.Random(seed)
    train_p = [(f"p_train{i}", statement(rng, i)) for i in range(4)]
    eval_p = [(f"p_eval{i}", statement(rng, 100 + i)) for i in range(3)]
    tables: dict[str, list[dict]] = {c.name: [] for c in CONFIGS}
    k = 0
    for name in ("train", "mixed", "heldout", "strong", "hard", "adv"):
        pool = train_p if name in ("train", "mixed") else eval_p
        for _ in range(rows):
            pid, q = rng.choice(pool)
            tables[name].append(instance(rng, pid, q, name, k))
            k += 1
    tables["dpo"] = [dpo_row(r) for r in tables["train"]]
    tables["mixed_dpo"] = [dpo_row(r) for r in tables["mixed"]]
    tables["train_questions"] = [
        {
            "problem_id": pid,
            "source": "bundled",
            "source_id": pid,
            "title": pid,
            "query": q,
            "test_mode": "stdio",
            "tests": [{"input": "1\n", "output": "1\n", "code": None}],
            "entry_point": None,
            "starter_code": None,
            "time_limit_s": 2.0,
            "memory_limit_mb": 256,
            "compare_mode": "tokens",
            "float_abs_tol": None,
            "float_rel_tol": None,
            "checker": None,
            "contest_date": None,
            "difficulty": None,
            "license": "MIT",
        }
        for pid, q in train_p
    ]
    schema = {"dpo": DPO_SCHEMA, "mixed_dpo": DPO_SCHEMA, "train_questions": TRAIN_QUESTIONS_SCHEMA}
    paths = {}
    for name, rows_ in tables.items():
        s = schema.get(name, INSTANCE_SCHEMA)
        write_parquet(pa.Table.from_pylist(rows_, schema=s), root / "final" / f"{name}.parquet", s)
        paths[name] = f"final/{name}.parquet"
        if name in WITH_TEST:
            _write_test(root, name, rows_)
    assign = [
        {"problem_id": p, "cluster_id": f"k_{p}", "split": "train", "reason": None}
        for p, _ in train_p
    ]
    assign += [
        {"problem_id": p, "cluster_id": f"k_{p}", "split": "heldout", "reason": None}
        for p, _ in eval_p
    ]
    write_parquet(
        pa.Table.from_pylist(assign, schema=SPLIT_ASSIGNMENT_SCHEMA),
        root / "splits" / "assignments.parquet",
        SPLIT_ASSIGNMENT_SCHEMA,
    )
    BuildManifest(
        build_id="b_test",
        pipeline_version="0.1.0",
        run_config={
            "name": "synthetic",
            "sampling": {"seed": seed},
            "hub": {"api_key": "sk-should-not-show", "hf_token": "hf_nope"},
            "dpo": {"max_tokens": 48},
        },
        seeds={"sample": seed},
        sandbox_image="sha256:feedface",
        tables=paths,
        test_tables={name: f"final/{name}.test.parquet" for name in WITH_TEST},
        assignments="splits/assignments.parquet",
    ).write(root)
    return root


def _write_test(root: Path, name: str, rows: list[dict]) -> None:
    """An evaluation config's `test` table: the first TEST_ROWS rows of its full table."""
    path = root / "final" / f"{name}.test.parquet"
    write_parquet(pa.Table.from_pylist(rows[:TEST_ROWS], schema=INSTANCE_SCHEMA), path)


def rewrite(root: Path, name: str, mutate) -> None:
    """Apply `mutate(rows) -> rows` to one config's table of a build (and its test table,
    which stays the first TEST_ROWS rows)."""
    import pyarrow.parquet as pq

    from schemas.dataset_configs import CONFIG_BY_NAME

    path = root / "final" / f"{name}.parquet"
    rows = mutate(pq.read_table(path).to_pylist())
    s = CONFIG_BY_NAME[name].schema
    write_parquet(pa.Table.from_pylist(rows, schema=s), path, s)
    if name in WITH_TEST:
        _write_test(root, name, rows)


PER_CANDIDATE = (
    "candidates",
    "pass_rates",
    "candidate_ids",
    "candidate_origins",
    "candidate_generators",
    "candidate_languages",
    "verdicts",
    "adversarial",
)


def keep_candidates(row: dict, keep: list[int]) -> dict:
    """The row with only the candidates at `keep` (in that order), its gold position,
    answer, size and language recomputed; the caller keeps the AC one in."""
    out = row | {c: [row[c][j] for j in keep] for c in PER_CANDIDATE}
    pos = out["verdicts"].index("AC")
    langs = set(out["candidate_languages"])
    gens = set(out["candidate_generators"])
    return out | {
        "num_candidates": len(keep),
        "chosen_position": pos,
        "chosen_answer": ANSWER_LETTERS[pos],
        "language": langs.pop() if len(langs) == 1 else "mixed",
        "generator": gens.pop() if len(gens) == 1 else "mixed",
    }


def as_pair(row: dict) -> dict:
    """The row cut to a pair: its correct candidate and the first incorrect one."""
    ac = row["verdicts"].index("AC")
    wrong = next(j for j, v in enumerate(row["verdicts"]) if v != "AC")
    return keep_candidates(row, sorted([ac, wrong]))


def with_origins(row: dict, origins: list[str], generators: list[str]) -> dict:
    """The row's first len(origins) candidates (the AC one kept in), with these origins
    and generators; `generator` recomputed (`mixed` when they differ)."""
    n = len(origins)
    keep = list(range(n))
    ac = row["verdicts"].index("AC")
    if ac >= n:
        keep[-1] = ac
    cut = keep_candidates(row, keep)
    gens = set(generators)
    return cut | {
        "candidate_origins": origins,
        "candidate_generators": generators,
        "generator": gens.pop() if len(gens) == 1 else "mixed",
    }
