"""Invariant re-checks run on the final tables before anything is published
(docs/architecture.md, "Invariants").

The stages enforce these as they build; publishing checks them again on exactly the
rows that would ship, reading nothing the stages wrote besides those rows, and refuses
to publish a dataset that breaks one, naming the offending rows.

  1. every instance has exactly one AC candidate, none SE (and the gold letter points at it);
  2. no problem, nor a near-duplicate of one, is in both a train config and an eval config
     (clusters recomputed from every published statement with the split stage's own
     clustering and threshold, pipeline/splits/dedup.py);
  6. every row says where it came from (non-empty provenance, one entry per candidate).
Every split is checked: an evaluation config's `test` rows under the label `<config>/test`
beside its `full` rows (`<config>`), and each `test` row must be a row of `full`.
Plus a DPO check: the chosen response picks the gold letter and the rejected one does not,
both read with the one answer reader (pipeline/common/answers.py: the first \\boxed{} after
the last </think>, exactly one valid letter), as DPO, rewards and evaluation read them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pyarrow as pa

from pipeline.common.answers import gold_letter, parse_answer
from pipeline.errors import ExitCode
from pipeline.publish.config import CheckConfig
from schemas import ANSWER_LETTERS
from schemas.dataset_configs import CONFIG_BY_NAME, DatasetConfig
from schemas.dpo import turn_text

ORIGINS = frozenset({"policy", "reference", "mutant"})
MAX_REPORTED_ROWS = 20  # per check: enough to find the bug, short enough to read


@dataclass(frozen=True)
class RowRef:
    config: str
    row: int
    key: str  # instance_id (or problem_id for train_questions)
    reason: str

    def __str__(self) -> str:
        return f"{self.config}[{self.row}] {self.key}: {self.reason}"


@dataclass
class CheckResult:
    name: str
    invariant: str
    checked_rows: int = 0
    violations: list[RowRef] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.violations

    def summary(self) -> str:
        if self.passed:
            return f"PASS {self.name}: {self.checked_rows} rows checked"
        return f"FAIL {self.name}: {len(self.violations)} offending row(s)"


class InvariantViolation(ValueError):
    """Raised by `enforce`: the message names every failed check and its first offending rows.
    The build made rows it must not publish: the run failed (exit 1), not its input."""

    exit_code = ExitCode.RUN_FAILED

    def __init__(self, results: list[CheckResult]):
        self.results = results
        lines = ["refusing to publish: invariant check(s) failed"]
        for r in results:
            if r.passed:
                continue
            lines.append(f"- {r.name} ({r.invariant}): {len(r.violations)} offending row(s)")
            lines += [f"    {v}" for v in r.violations[:MAX_REPORTED_ROWS]]
            if len(r.violations) > MAX_REPORTED_ROWS:
                lines.append(f"    ... and {len(r.violations) - MAX_REPORTED_ROWS} more")
        super().__init__("\n".join(lines))


TEST_LABEL = "/test"  # `heldout/test`: the label of an evaluation config's test rows


def _config_of(label: str) -> DatasetConfig:
    """The config behind a table label (`heldout` or `heldout/test`)."""
    return CONFIG_BY_NAME[label.removesuffix(TEST_LABEL)]


def _key(row: dict) -> str:
    return str(row.get("instance_id") or row.get("problem_id") or "?")


def check_one_correct(tables: dict[str, pa.Table]) -> CheckResult:
    """Invariant 1 on every instance-shaped config (instances and DPO rows)."""
    res = CheckResult("one-correct-candidate", "invariant 1")
    for name, table in tables.items():
        if _config_of(name).kind == "questions":
            continue
        cols = [
            "instance_id",
            "num_candidates",
            "candidates",
            "verdicts",
            "pass_rates",
            "candidate_ids",
            "chosen_position",
            "chosen_answer",
        ]
        for i, row in enumerate(table.select(cols).to_pylist()):
            reason = _instance_problem(row)
            res.checked_rows += 1
            if reason:
                res.violations.append(RowRef(name, i, _key(row), reason))
    return res


def _instance_problem(row: dict) -> str | None:
    n = row["num_candidates"]
    verdicts = row["verdicts"]
    lengths = {len(row[c]) for c in ("candidates", "verdicts", "pass_rates", "candidate_ids")}
    if lengths != {n}:
        return f"num_candidates={n} but list lengths are {sorted(lengths)}"
    if not 2 <= n <= len(ANSWER_LETTERS):
        return f"num_candidates={n} outside 2..{len(ANSWER_LETTERS)}"
    if "SE" in verdicts:
        return f"a candidate has verdict SE (sandbox error): {verdicts}"
    n_ac = verdicts.count("AC")
    if n_ac != 1:
        return f"{n_ac} candidates with verdict AC (need exactly 1): {verdicts}"
    pos = row["chosen_position"]
    if not 0 <= pos < n or verdicts[pos] != "AC":
        return f"chosen_position={pos} does not point at the AC candidate ({verdicts})"
    if gold_letter(row["chosen_answer"]) != ANSWER_LETTERS[pos]:
        return f"chosen_answer={row['chosen_answer']!r} but chosen_position={pos}"
    return None


def _turns_problem(row: dict) -> str | None:
    """What is wrong with a row's conversational columns (TRL's preference format), or None:
    `prompt` ends in a user turn, `chosen` and `rejected` are one assistant turn each."""
    prompt = row["prompt"] or []
    if not prompt or prompt[-1]["role"] != "user":
        return f"prompt: its last message must be the user turn, got {[m['role'] for m in prompt]}"
    for column in ("chosen", "rejected"):
        turns = row[column] or []
        if [m["role"] for m in turns] != ["assistant"]:
            return f"{column}: must be one assistant message, got {[m['role'] for m in turns]}"
    return None


def check_dpo_pairs(tables: dict[str, pa.Table]) -> CheckResult:
    """A DPO row is in TRL's conversational preference format; its chosen response picks the
    gold letter, the rejected one does not."""
    res = CheckResult("dpo-chosen-rejected", "DPO contract")
    for name, table in tables.items():
        if _config_of(name).kind != "dpo":
            continue
        cols = ["instance_id", "prompt", "chosen", "rejected", "chosen_answer", "rejected_answer"]
        cols.append("num_candidates")
        for i, row in enumerate(table.select(cols).to_pylist()):
            res.checked_rows += 1
            k = row["num_candidates"]
            shape = _turns_problem(row)
            gold = gold_letter(row["chosen_answer"])
            picked = parse_answer(turn_text(row["chosen"] or []), k)
            rejected = parse_answer(turn_text(row["rejected"] or []), k)
            if shape is not None:
                reason = shape
            elif picked != gold:
                reason = f"chosen response picks {picked!r}, gold is {gold!r}"
            elif rejected == gold:
                reason = f"rejected response also picks the gold letter {gold!r}"
            elif gold_letter(row["rejected_answer"]) == gold:
                reason = f"rejected_answer is the gold letter {gold!r}"
            else:
                continue
            res.violations.append(RowRef(name, i, _key(row), reason))
    return res


def check_provenance(tables: dict[str, pa.Table]) -> CheckResult:
    """Invariant 6: every row says where it came from."""
    res = CheckResult("provenance", "invariant 6")
    for name, table in tables.items():
        kind = _config_of(name).kind
        for i, row in enumerate(table.to_pylist()):
            res.checked_rows += 1
            reason = (
                _questions_provenance(row) if kind == "questions" else _instance_provenance(row)
            )
            if kind == "dpo" and reason is None:
                missing = [c for c in ("judge_model", "rejected_judge_model") if not row.get(c)]
                reason = f"empty {missing}" if missing else None
            if reason:
                res.violations.append(RowRef(name, i, _key(row), reason))
    return res


def _questions_provenance(row: dict) -> str | None:
    missing = [c for c in ("problem_id", "source", "source_id") if not row.get(c)]
    return f"empty {missing}" if missing else None


def _instance_provenance(row: dict) -> str | None:
    missing = [
        c for c in ("problem_id", "source", "build_id", "split", "generator") if not row.get(c)
    ]
    if missing:
        return f"empty {missing}"
    n = row["num_candidates"]
    per_cand = (
        "candidate_ids",
        "candidate_origins",
        "candidate_generators",
        "candidate_languages",
        "adversarial",
    )
    for col in per_cand:
        if len(row[col]) != n:
            return f"{col} has {len(row[col])} entries for {n} candidates"
    for col in per_cand[:4]:
        if any(not v for v in row[col]):
            return f"{col} has an empty entry: {row[col]}"
    bad = [o for o in row["candidate_origins"] if o not in ORIGINS]
    if bad:
        return f"candidate_origins has unknown origin(s) {bad}"
    return None


def _problem_rows(tables: dict[str, pa.Table], side: str) -> dict[str, list[tuple[str, int]]]:
    """problem_id -> [(config, row)] for every config on one side of the train/eval wall."""
    out: dict[str, list[tuple[str, int]]] = {}
    for name, table in tables.items():
        if _config_of(name).side != side:
            continue
        for i, pid in enumerate(table.column("problem_id").to_pylist()):
            out.setdefault(pid, []).append((name, i))
    return out


def _texts(tables: dict[str, pa.Table], side: str) -> list[tuple[str, str]]:
    """Every distinct (problem_id, statement text) published on one side, sorted. A train
    problem ships its instances' `query` and its Train-Questions `query`; both are checked."""
    out: set[tuple[str, str]] = set()
    for name, table in tables.items():
        if _config_of(name).side != side:
            continue
        out.update(zip(table.column("problem_id").to_pylist(), table.column("query").to_pylist()))
    return sorted(out)


def check_train_eval_disjoint(
    tables: dict[str, pa.Table], config: CheckConfig | None = None
) -> CheckResult:
    """Invariant 2, re-derived from the published rows alone: no problem id on both sides,
    and no eval statement in a near-duplicate cluster with a train statement.

    The clusters are recomputed here from the `query` texts being published with the
    split stage's clustering (`links_across`), not read from the split stage's outputs:
    a bug in that stage, or a table edited after it, cannot vouch for itself.
    """
    config = config or CheckConfig()
    res = CheckResult("train-eval-disjoint", "invariant 2")
    train_rows, eval_rows = _problem_rows(tables, "train"), _problem_rows(tables, "eval")
    res.checked_rows = sum(t.num_rows for t in tables.values())

    def flag(eval_pid: str, reason: str) -> None:
        for cfg, row in eval_rows[eval_pid][:3]:
            res.violations.append(RowRef(cfg, row, eval_pid, reason))

    for pid in sorted(set(train_rows) & set(eval_rows)):
        where = ", ".join(f"{c}[{r}]" for c, r in train_rows[pid][:3])
        flag(pid, f"problem also in train side ({where})")

    train_docs = _texts(tables, "train")
    eval_docs = [(p, q) for p, q in _texts(tables, "eval") if p not in train_rows]
    params = config.near_dup.dedup_params()
    from pipeline.splits.dedup import links_across  # datasketch: slow to import, only when checking

    links = links_across([q for _, q in train_docs], [q for _, q in eval_docs], params)
    flagged: set[str] = set()
    # One report per eval problem: its link with the highest direct Jaccard.
    for link in sorted(links, key=lambda k: (eval_docs[k.right][0], -k.jaccard)):
        eval_pid = eval_docs[link.right][0]
        if eval_pid in flagged:
            continue
        flagged.add(eval_pid)
        train_pid, jac = train_docs[link.left][0], link.jaccard
        how = (
            f"statement near-duplicate of train problem {train_pid} (Jaccard {jac:.2f})"
            if jac >= params.threshold
            else f"near-duplicate cluster shared with train problem {train_pid} through a "
            f"chain of near-duplicates (direct Jaccard {jac:.2f})"
        )
        flag(eval_pid, how)
    return res


def check_test_within_full(splits: dict[str, dict[str, pa.Table]]) -> CheckResult:
    """An evaluation config's `test` split is a sample of its `full` split: every test row
    is a row of full (same instance_id, same content), and no test row is repeated."""
    res = CheckResult("test-within-full", "test split")
    for name, by_split in splits.items():
        if "test" not in by_split or by_split["test"] is by_split["full"]:
            continue
        full = {r["instance_id"]: r for r in by_split["full"].to_pylist()}
        seen: set[str] = set()
        for i, row in enumerate(by_split["test"].to_pylist()):
            res.checked_rows += 1
            iid = row["instance_id"]
            if iid in seen:
                reason = "appears twice in the test split"
            elif iid not in full:
                reason = "is not a row of the full split"
            elif full[iid] != row:
                differ = sorted(k for k in row if row[k] != full[iid].get(k))
                reason = f"differs from its full-split row in {differ}"
            else:
                seen.add(iid)
                continue
            res.violations.append(RowRef(name + TEST_LABEL, i, iid, reason))
    return res


def run_checks(
    tables: dict[str, pa.Table],
    config: CheckConfig | None = None,
    splits: dict[str, dict[str, pa.Table]] | None = None,
) -> list[CheckResult]:
    """Every check on `tables` (one table per config: train / full), and, with `splits`
    (pipeline.publish.layout.split_tables), on each evaluation config's `test` rows too."""
    checked = dict(tables)
    results = []
    if splits is not None:
        for name, by_split in splits.items():
            test = by_split.get("test")
            if test is not None and test is not by_split["full"]:
                checked[name + TEST_LABEL] = test
        results.append(check_test_within_full(splits))
    return [
        check_one_correct(checked),
        check_train_eval_disjoint(checked, config),
        check_provenance(checked),
        check_dpo_pairs(checked),
        *results,
    ]


def enforce(results: Iterable[CheckResult]) -> list[CheckResult]:
    results = list(results)
    if any(not r.passed for r in results):
        raise InvariantViolation(results)
    return results


__all__ = [
    "CheckResult",
    "InvariantViolation",
    "RowRef",
    "enforce",
    "run_checks",
]
