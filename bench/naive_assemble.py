"""The assembly of one split written the obvious way (dicts, loops, `re`), for the benchmark.

It makes the same instances as `pipeline.instances.assemble` with `selection: balanced`
(same rules, same seeded
hashes, computed one value at a time), so `bench_assemble.py` can check that both sides
select the same instances before it compares their speed. It covers what the benchmark
runs: the four instance splits from clean synthetic input (nothing to quarantine).
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from typing import Any

from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.normalize import _PASSES
from pipeline.instances.rng import _HEX_ID, purpose_salt
from pipeline.instances.sizes import allocate_sizes
from schemas.ids import instance_id_for
from schemas.instance import ANSWER_LETTERS

_MASK = (1 << 64) - 1
_GOLDEN, _M1, _M2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB

# polars writes group references as ${1}; Python's re as \g<1>
NAIVE_PASSES = {
    lang: [(re.compile(p), r.replace("${", "\\g<").replace("}", ">")) for p, r in passes]
    for lang, passes in _PASSES.items()
}


def mix64(a: int, b: int) -> int:
    z = (a ^ ((b * _GOLDEN + 0x632BE59BD9B4E019) & _MASK)) & _MASK
    z = ((z ^ (z >> 30)) * _M1) & _MASK
    z = ((z ^ (z >> 27)) * _M2) & _MASK
    return z ^ (z >> 31)


def hash_values(values: list[str], salt: str) -> dict[str, int]:
    """`rng.hash_column`, one value at a time."""
    if values and all(re.match(_HEX_ID, v) for v in values):
        s = purpose_salt(0, salt)
        return {v: mix64(int(v[-15:], 16), s) for v in values}
    key = hashlib.blake2b(salt.encode(), digest_size=16).digest()
    return {
        v: int.from_bytes(hashlib.blake2b(v.encode(), digest_size=8, key=key).digest(), "little")
        for v in values
    }


def normalise(code: str, language: str) -> str:
    for pattern, repl in NAIVE_PASSES[language]:
        code = pattern.sub(repl, code)
    return code.strip()


def eligible(rows: list[dict], split_of: dict[str, str], config: AssembleConfig) -> list[dict]:
    """The pool: usable verdicts and code, a train/heldout problem, no flaky duplicates."""
    wanted = {(s.tier, s.problems) for s in config.splits}
    pool = []
    for r in rows:
        sp = split_of.get(r["problem_id"])
        if r["verdict"] == "SE" or r["verdict"] in config.exclude_verdicts:
            continue
        if r["extraction"] not in ("ok", "fallback", "not_applicable") or not r["code"].strip():
            continue
        if sp not in ("train", "heldout") or (r["tier"], sp) not in wanted:
            continue
        key = r["language"] + "\x00" + normalise(r["code"], r["language"])
        pool.append(
            {**r, "problem_split": sp, "dedup_key": key, "is_correct": r["verdict"] == "AC"}
        )
    verdicts: dict[tuple, set[bool]] = defaultdict(set)
    for r in pool:
        verdicts[(r["problem_id"], r["dedup_key"])].add(r["is_correct"])
    pool = [r for r in pool if len(verdicts[(r["problem_id"], r["dedup_key"])]) == 1]
    hashes = hash_values([r["candidate_id"] for r in pool], f"{config.seed}:candidate")
    for r in pool:
        r["cand_hash"] = hashes[r["candidate_id"]]
    return pool


def build_split(
    pool: list[dict], query_of: dict[str, tuple[str, str]], spec: SplitSpec, config: AssembleConfig
) -> list[dict[str, Any]]:
    """Output rows (the instance columns) of one split, sorted as the stage sorts them."""
    salt = f"{config.seed}:{spec.name}"
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in pool:
        if r["tier"] == spec.tier and r["problem_split"] == spec.problems:
            groups["\x1f".join((r["problem_id"], r["generator"], r["language"]))].append(r)
    slots = []
    for gkey, members in groups.items():
        members.sort(key=lambda r: (r["cand_hash"], r["candidate_id"]))
        seen, correct, incorrect, rates = set(), [], [], set()
        for r in members:
            if r["dedup_key"] in seen:
                continue
            seen.add(r["dedup_key"])
            if r["is_correct"]:
                correct.append(r)
            elif _in_band(r["pass_rate"], spec, config):
                rate = round(r["pass_rate"], 9)
                if config.one_incorrect_per_pass_rate and rate in rates:
                    continue
                rates.add(rate)
                incorrect.append(r)
        if not correct or len(incorrect) < config.min_candidates - 1:
            continue
        max_size = min(len(incorrect) + 1, config.max_candidates)
        for j in range(min(len(correct), spec.max_instances_per_group)):
            slots.append({"gkey": gkey, "slot_id": f"{gkey}\x1e{j}", "ok": correct[j],
                          "wrong": incorrect, "max_size": max_size,
                          "problem_id": correct[0]["problem_id"]})  # fmt: skip
    hashes = hash_values([s["slot_id"] for s in slots], salt + ":slot")
    for s in slots:
        s["slot_hash"] = hashes[s["slot_id"]]
    slots.sort(key=lambda s: (s["slot_hash"], s["slot_id"]))
    per_problem: dict[str, int] = defaultdict(int)
    capped = []
    cap = spec.max_instances_per_problem  # None: no cap, as in the stage
    for s in slots:
        per_problem[s["problem_id"]] += 1
        if cap is None or per_problem[s["problem_id"]] <= cap:
            capped.append(s)
    sized = _assign_sizes(capped, spec, config)
    position_salt = purpose_salt(config.seed, spec.name, "position")
    rows = []
    for s in sized:  # still in (slot_hash, slot_id) order
        size, pos = s["size"], mix64(s["slot_hash"], position_salt) % s["size"]
        drawn = sorted(
            s["wrong"], key=lambda r: (mix64(s["slot_hash"], r["cand_hash"]), r["candidate_id"])
        )[: size - 1]
        members = drawn[:pos] + [s["ok"]] + drawn[pos:]
        rows.append(_row(s, members, pos, query_of, spec, config))
    if spec.cap_per_stratum is not None:  # first rows (hash order) of each (size, language)
        kept: dict[tuple[int, str], int] = defaultdict(int)
        capped_rows = []
        for r in rows:
            kept[(r["num_candidates"], r["language"])] += 1
            if kept[(r["num_candidates"], r["language"])] <= spec.cap_per_stratum:
                capped_rows.append(r)
        rows = capped_rows
    return rows


def _in_band(rate: float, spec: SplitSpec, config: AssembleConfig) -> bool:
    if spec.band == "easy":
        return rate <= config.easy_max_pass_rate
    return config.hard_min_pass_rate <= rate <= config.hard_max_pass_rate


def _assign_sizes(slots: list[dict], spec: SplitSpec, config: AssembleConfig) -> list[dict]:
    per_max: dict[int, int] = defaultdict(int)
    for s in slots:
        per_max[s["max_size"]] += 1
    plan = allocate_sizes(dict(per_max), config.min_candidates, spec.size_targets)
    queue = {m: [size for size in sorted(alloc, reverse=True) for _ in range(alloc[size])]
             for m, alloc in plan.items()}  # fmt: skip
    taken: dict[int, int] = defaultdict(int)
    out = []
    for s in slots:
        m, k = s["max_size"], taken[s["max_size"]]
        taken[m] += 1
        if k < len(queue.get(m, [])):
            out.append({**s, "size": queue[m][k]})
    return out


def _single_or_mixed(values: list[str]) -> str:
    return values[0] if len(set(values)) == 1 else "mixed"


def _row(s: dict, members: list[dict], pos: int, query_of: dict[str, tuple[str, str]],
         spec: SplitSpec, config: AssembleConfig) -> dict[str, Any]:  # fmt: skip
    ids = [r["candidate_id"] for r in members]
    source, query = query_of[s["problem_id"]]
    return {
        "prompt_id": s["problem_id"],  # as in Aletheia: the problem's id
        "instance_id": instance_id_for(s["problem_id"], ids, salt=spec.name),
        "problem_id": s["problem_id"],
        "source": source,
        "query": query,
        "num_candidates": len(members),
        "candidates": [r["code"] for r in members],
        "candidate_ids": ids,
        "candidate_origins": [r["origin"] for r in members],
        "candidate_generators": [r["generator"] for r in members],
        "candidate_languages": [r["language"] for r in members],
        "verdicts": [r["verdict"] for r in members],
        "pass_rates": [r["pass_rate"] for r in members],
        "chosen_position": pos,
        "chosen_answer": ANSWER_LETTERS[pos],
        "generator": _single_or_mixed([r["generator"] for r in members]),
        "language": _single_or_mixed([r["language"] for r in members]),
        "easy_hard": spec.band,
        "weak_strong": spec.tier,
        "adversarial": [None] * len(members),
        "split": spec.name,
        "build_id": config.build_id,
    }


def naive_assemble(
    rows: list[dict], problems: list[dict], split_of: dict[str, str], config: AssembleConfig
) -> dict[str, list[dict[str, Any]]]:
    """Every configured split's output rows, from plain Python rows."""
    query_of = {
        p["problem_id"]: (p["source"], p["prompt_statement"] if p["prompt_statement"].strip()
                          else p["statement"])
        for p in problems
    }  # fmt: skip
    pool = eligible(rows, split_of, config)
    return {spec.name: build_split(pool, query_of, spec, config) for spec in config.splits}
