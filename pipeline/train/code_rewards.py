"""Execution rewards for code-policy RLVR, judged by the sandbox in batches.

TRL calls each reward function in turn with the same completions; the first call of a
step judges the whole batch (one `judge` call on the judge engine: the pool spreads it over
its workers) and the others read the cached result. Each program is judged as the judge
stage judges it: the one request builder of pipeline.judge.interface, from the problem's
Train-Questions row (comparison mode, float tolerances, checker, limits). The rewards:

- pass_fraction: passed / total tests.
- all_pass: 1.0 when every test passes (verdict AC), else 0.0.
- lint: Ruff penalty, `-per_violation` per violation, floored at -1. A completion with
  no extractable program gets -1: otherwise "write nothing" would be lint-perfect.
- combined: pass_fraction, plus `lint_weight * lint` only once every test passes.
  Lint-only shaping is known to push policies to short, useless programs, so style
  never competes with correctness.
- verifier: a code verifier's pairwise verdicts on each group's rollouts
  (pipeline.train.verifier_reward, `rlvr.verifier`), scored after the tests so that its
  per-step diagnostic can set the verifier's rewards against their verdicts.

No signal, never a silent zero: a program the sandbox could not judge (verdict SE, or
its judge call timed out or failed) gets `None` from the test-based rewards; TRL turns
None into NaN and leaves it out of the group's mean. Each such event is counted in the
step's metrics (`rlvr/sandbox_se`, `rlvr/failed_batches`), and after
`rlvr.sandbox.max_failed_batches` failed judge calls in a row training stops with an error
rather than running on without rewards (a step's programs go to the judge in one call, or
in a few as its rollouts finish).

A completion with no program in it (extraction failed) is the policy's fault, not the
sandbox's: it scores 0 on the test rewards and counts as verdict `NO_CODE`.

What a step's judging costs, and keeping it off the step's critical path:

- The trainer sends each rollout's program to the judge, and to Ruff, as soon as the rollout
  is finished (`submit`, from pipeline/train/rlvr.py: while the rest of the batch is still
  being generated), in the background; the reward functions then wait for those verdicts and
  lint reports and send only what was not sent yet. The rewards are those of judging when the first reward function
  asks: the same programs, requests and judge, matched by (problem, program).
- A program written more than once in a batch (the same problem, the same extracted code:
  GRPO's group of one prompt often repeats its best program) is judged once.
- Rewards judge with `stop_at_timeout` (`rlvr.sandbox.stop_at_timeout`, on by default): after
  a test that runs out of time no further test of that program runs, and they count as not
  passed. A looping program then holds its judge slot for one time limit, not one per test,
  and its verdict (TLE) and `all_pass` are unchanged; only its `pass_fraction` can be lower
  than the judge stage's (a test it would have passed after the time-out is not run).

Per step the scorer also logs what it costs and whether the step can teach anything:
`rlvr/reward_time_s` (the whole scoring: extraction, judge, lint), `rlvr/reward_wait_s` (how
long the trainer waited for it: the part not hidden behind the step's other work),
`rlvr/judged_early` (the share of the distinct programs sent to the judge before the rewards
were asked for),
`rlvr/judge_time_s` (the judge call alone), `rlvr/judge_unique` (distinct programs over
programs), `rlvr/judge_cached` (the share of the distinct programs the engine's verdict
cache answered), `rlvr/pass_at_1` (the AC share of the judged rollouts) and
`rlvr/zero_variance_groups`: the share of GRPO groups (the `num_generations` rollouts of one
prompt, consecutive in TRL's batch) whose total reward (the configured rewards, weighted, as
TRL sums them) is the same for every rollout. Such a group has zero advantage everywhere, so
it teaches the policy nothing.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.judge.interface import JudgeSpec, judge_spec, verdict_columns
from pipeline.sampling.extraction import extract_code
from pipeline.train.config import RlvrSettings
from pipeline.train.lint import LintReport, lint_penalty, lint_python
from pipeline.train.rewards import completion_text
from pipeline.train.verifier_reward import VerifierReward, VerifierScores
from sandbox.engines import JudgeEngine
from sandbox.models import JudgeRequest
from schemas.problem import JUDGE_FIELDS

log = logging.getLogger(__name__)

NO_CODE = "NO_CODE"
BATCH_FAILED = "BATCH_FAILED"  # the whole judge call failed or timed out (no verdict at all)


@dataclass(frozen=True)
class _Sent:
    """A program sent ahead: its batch's judge call and Ruff call, and its place in them."""

    verdicts: cf.Future  # -> [(verdict, passed, total, cached)] for the batch
    lints: cf.Future  # -> [LintReport] for the batch
    index: int
    sent_at: float


@dataclass(frozen=True)
class Scored:
    verdict: str  # a sandbox verdict, NO_CODE or BATCH_FAILED
    passed: int
    total: int
    lint: LintReport | None  # None when no program was extracted

    @property
    def judged(self) -> bool:
        """True when the sandbox gave a real verdict on the program (or there was none to run)."""
        return self.verdict not in ("SE", BATCH_FAILED)

    @property
    def pass_fraction(self) -> float | None:
        if not self.judged:
            return None
        return self.passed / self.total if self.total else 0.0

    @property
    def all_pass(self) -> float | None:
        return None if not self.judged else float(self.verdict == "AC")


def lint_reward(s: Scored, per_violation: float) -> float:
    return -1.0 if s.lint is None else lint_penalty(s.lint, per_violation)


def combined_reward(s: Scored, per_violation: float, lint_weight: float) -> float | None:
    frac = s.pass_fraction
    if frac is None:
        return None
    if s.verdict == "AC":
        return frac + lint_weight * lint_reward(s, per_violation)
    return frac


class SandboxRewardScorer:
    """Scores a batch of completions once per step and serves every reward function from it.

    Requests come from the judge interface's one builder (pipeline.judge.interface), from the
    problem's own row: its comparison (float tolerances, checker), limits (time scaled by
    `rlvr.sandbox.time_limit_scale`, memory clamped to the sandbox's range), so a program
    earns the verdict the judge stage would give it."""

    def __init__(
        self, client: JudgeEngine, settings: RlvrSettings, verifier: VerifierReward | None = None
    ) -> None:
        self.client = client
        self.settings = settings
        self.verifier = verifier  # the `verifier` reward's (pipeline.train.verifier_reward)
        self._key: str | None = None
        self._scored: list[Scored] = []
        self._verified: VerifierScores | None = None  # the last batch's verifier rewards
        self._specs: dict[str, JudgeSpec] = {}  # problem_id -> its judge spec, built once
        self.failed_batches_in_a_row = 0
        self.cached_in_last_batch = 0  # programs the engine's verdict cache answered
        self._table = reward_table(settings)
        # Programs already sent to the judge (`submit`) and not yet scored: (problem id,
        # program) -> its judge and lint calls. Several batches can be in flight at once (with
        # `generate_ahead` the next step's rollouts are sent while this step's are scored), so
        # a batch's scoring takes out only its own programs.
        self._early: dict[tuple[str, str], _Sent] = {}
        self._codes: dict[str, str] = {}  # completion text -> its extracted program
        self._background: cf.ThreadPoolExecutor | None = None
        self._lock = threading.Lock()  # the failure count, from background judge calls

    def spec(self, row: Mapping[str, Any]) -> JudgeSpec:
        """The problem's judge spec (from its Train-Questions row), built once per problem."""
        pid = row["problem_id"]
        if pid not in self._specs:
            self._specs[pid] = judge_spec(
                row, time_limit_scale=self.settings.sandbox.time_limit_scale
            )
        return self._specs[pid]

    # -- scoring ------------------------------------------------------------------------
    def submit(self, completions: Sequence[Any], rows: Sequence[Mapping[str, Any]]) -> None:
        """Send these rollouts' programs to the judge and to Ruff now, in the background, each
        distinct program once (the trainer calls this as rollouts finish); `score` then waits
        for their verdicts and lint reports instead of running them again."""
        new: dict[tuple[str, str], tuple[JudgeRequest, JudgeSpec]] = {}
        stop = self.settings.sandbox.stop_at_timeout
        for c, row in zip(completions, rows, strict=True):
            code = self._code(completion_text(c))
            key = (row["problem_id"], code)
            if code.strip() and key not in self._early and key not in new:
                spec = self.spec(row)
                request = spec.request(self.settings.language, code).model_copy(
                    update={"stop_at_timeout": stop}
                )
                new[key] = (request, spec)
        if not new:
            return
        if self._background is None:
            self._background = cf.ThreadPoolExecutor(8, thread_name_prefix="rlvr-judge-early")
        sent_at = time.perf_counter()
        requests, specs = (list(x) for x in zip(*new.values(), strict=True))
        verdicts = self._background.submit(self._judge, requests, specs)
        # Extraction strips the fence's trailing newline; put it back so W292 is not charged for it.
        sources = [code.rstrip("\n") + "\n" for _, code in new]
        lints = self._background.submit(lint_python, sources, self.settings.lint_select)
        for j, key in enumerate(new):
            self._early[key] = _Sent(verdicts, lints, j, sent_at)

    def _code(self, text: str) -> str:
        """The program in a completion, extracted once per text."""
        code = self._codes.get(text)
        if code is None:
            if len(self._codes) > 100_000:  # streamed texts a batch never scored: drop them
                self._codes.clear()
            code = self._codes[text] = extract_code(text, self.settings.language).code
        return code

    def score(
        self,
        completions: Sequence[Any],
        rows: Sequence[dict[str, Any]],
        log_metric: Callable | None = None,
    ) -> list[Scored]:
        texts = [completion_text(c) for c in completions]
        key = _batch_key(texts, [r["problem_id"] for r in rows])
        if key == self._key:
            return self._scored
        start = time.perf_counter()
        scored, metrics = self._score_batch(texts, rows)
        if self.verifier is not None:  # after the tests: its diagnostic reads their verdicts
            self._verified = self._verify(texts, rows, scored, metrics)
        self._key, self._scored = key, scored
        if log_metric is not None:
            metrics["rlvr/reward_wait_s"] = time.perf_counter() - start
            for name, value in metrics.items():
                log_metric(name, value)
        return scored

    def _score_batch(
        self, texts: Sequence[str], rows: Sequence[Mapping[str, Any]]
    ) -> tuple[list[Scored], dict[str, float]]:
        """Extract, judge (each distinct program once; what `submit` sent is waited for) and
        lint a batch; its step metrics."""
        start = time.perf_counter()
        codes = [self._code(t) for t in texts]
        todo = [i for i, c in enumerate(codes) if c.strip()]
        first: dict[tuple[str, str], int] = {}  # (problem, program) -> its index in `unique`
        unique: list[int] = []  # the first completion of each distinct program
        for i in todo:
            if (rows[i]["problem_id"], codes[i]) not in first:
                first[rows[i]["problem_id"], codes[i]] = len(unique)
                unique.append(i)
        keys = [(rows[i]["problem_id"], codes[i]) for i in unique]
        early = sum(k in self._early for k in keys)
        self.submit([texts[i] for i in unique], [rows[i] for i in unique])  # the rest, now
        sent = [self._early[k] for k in keys]
        began = min((x.sent_at for x in sent), default=start)
        judge_start = time.perf_counter()
        try:
            verdicts = [x.verdicts.result()[x.index] for x in sent]
            judge_s = time.perf_counter() - judge_start
            lints = [x.lints.result()[x.index] for x in sent]
        finally:
            for k in keys:
                self._early.pop(k, None)
            for t in texts:
                self._codes.pop(t, None)
        self.cached_in_last_batch = sum(v[3] for v in verdicts)
        scored = [Scored(NO_CODE, 0, len(r["tests"]), None) for r in rows]
        for i in todo:
            j = first[rows[i]["problem_id"], codes[i]]
            v = verdicts[j]
            scored[i] = Scored(v[0], v[1], v[2], lints[j])
        metrics = step_diagnostics(scored, texts)
        if self.verifier is None:  # else once the verifier's rewards are in (`_verify`)
            totals = [self.total_reward(x) for x in scored]
            share = zero_variance_share(totals, self.settings.num_generations)
            if share is not None:
                metrics["rlvr/zero_variance_groups"] = share
        metrics["rlvr/judge_time_s"] = judge_s
        if todo:  # a program seen before is answered from the verdict cache, at no run cost
            metrics["rlvr/judge_unique"] = len(unique) / len(todo)
            metrics["rlvr/judge_cached"] = self.cached_in_last_batch / len(unique)
            metrics["rlvr/judged_early"] = early / len(unique)
        metrics["rlvr/reward_time_s"] = time.perf_counter() - began
        return scored, metrics

    def total_reward(self, s: Scored, verifier: float | None = None) -> float | None:
        """The reward GRPO's advantage is computed from: the configured rewards, weighted and
        summed as TRL sums them (None counts as nothing; None when every reward is None).
        `verifier`: the rollout's verifier reward, where `rlvr.rewards` has one."""
        parts = [
            (w, verifier if name == VERIFIER else self._table[name](s))
            for name, w in self.settings.rewards.items()
        ]
        values = [w * v for w, v in parts if v is not None]
        return sum(values) if values else None

    def _verify(
        self,
        texts: Sequence[str],
        rows: Sequence[Mapping[str, Any]],
        scored: Sequence[Scored],
        metrics: dict[str, float],
    ) -> VerifierScores:
        """The verifier's rewards for the batch, its diagnostic against the tests' verdicts,
        and the share of groups that teach nothing (BRPO: every advantage 0)."""
        assert self.verifier is not None
        missing = [r.get("problem_id") for r in rows if not r.get("query")]
        if missing:
            raise ValueError(
                f"verifier reward: rows {missing[:3]} have no `query` (the problem statement "
                "the verifier reads; Train-Questions rows carry it)"
            )
        language = self.settings.language
        # no program extracted: the whole text, as Aletheia shows it
        programs = [extract_code(t, language).code or t for t in texts]
        passed = [s.verdict == "AC" if s.judged else None for s in scored]
        v = self.verifier.score(programs, [r["query"] for r in rows], passed)
        metrics.update(v.metrics)
        group = self.settings.num_generations
        if v.advantages is not None:
            flat = [
                all(a == 0 for a in v.advantages[g : g + group])
                for g in range(0, len(v.advantages), group)
            ]
            metrics["rlvr/zero_variance_groups"] = sum(flat) / len(flat)
        else:
            totals = [self.total_reward(s, r) for s, r in zip(scored, v.rewards, strict=True)]
            share = zero_variance_share(totals, group)
            if share is not None:
                metrics["rlvr/zero_variance_groups"] = share
        return v

    def brpo_advantages(self, n: int) -> list[float]:
        """The last batch's BRPO advantages (the trainer puts them in place of TRL's)."""
        v = self._verified
        if v is None or v.advantages is None or len(v.advantages) != n:
            raise RuntimeError(
                f"verifier reward: no BRPO advantages for this batch of {n} rollouts "
                f"(have {None if v is None or v.advantages is None else len(v.advantages)})"
            )
        return v.advantages

    def _judge(
        self, requests: list[JudgeRequest], specs: list[JudgeSpec]
    ) -> list[tuple[str, int, int, bool]]:
        """(verdict, passed, total, answered by the verdict cache) per request."""
        if not requests:
            return []
        timeout = self.settings.sandbox.batch_timeout_s
        pool = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="rlvr-judge")
        future = pool.submit(self.client.judge, requests, progress=False)
        try:
            results = future.result(timeout=timeout)
        except Exception as e:  # noqa: BLE001 - any failure becomes "no signal", counted below
            reason = (
                f"timed out after {timeout:.0f}s" if isinstance(e, cf.TimeoutError) else repr(e)
            )
            return self._batch_failed(len(requests), reason)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            self.failed_batches_in_a_row = 0
        stamp = self.client.stamp
        columns = [verdict_columns(r, s, stamp) for r, s in zip(results, specs, strict=True)]
        return [
            (c["verdict"], c["passed"], c["total"], r.cached)
            for c, r in zip(columns, results, strict=True)
        ]

    def _batch_failed(self, n: int, reason: str) -> list[tuple[str, int, int, bool]]:
        with self._lock:
            self.failed_batches_in_a_row += 1
            failed = self.failed_batches_in_a_row
        limit = self.settings.sandbox.max_failed_batches
        log.warning(
            "sandbox reward batch failed (%d in a row, limit %d): %s",
            failed,
            limit,
            reason,
        )
        if failed >= limit:
            raise RuntimeError(
                f"sandbox reward batches failed {failed} times in a row "
                f"(rlvr.sandbox.max_failed_batches={limit}); last: {reason}"
            )
        return [(BATCH_FAILED, 0, 0, False)] * n

    # -- TRL reward functions -----------------------------------------------------------
    def reward_funcs(self, names: Sequence[str]) -> list[Callable[..., list[float | None]]]:
        s = self.settings

        def _rows(kwargs: dict[str, Any], n: int) -> list[dict[str, Any]]:
            missing = [c for c in ROW_COLUMNS if c not in kwargs]
            if missing:
                raise ValueError(
                    f"RLVR rewards: the dataset has no column(s) {missing}; the rewards judge "
                    f"each problem by its own row (Train-Questions schema version 2 has them)"
                )
            columns = [*ROW_COLUMNS, *(c for c in VERIFIER_COLUMNS if c in kwargs)]
            return [{c: kwargs[c][i] for c in columns} for i in range(n)]

        def make(
            name: str, fn: Callable[[Scored], float | None]
        ) -> Callable[..., list[float | None]]:
            def reward(completions: list[Any], log_metric: Callable | None = None, **kwargs: Any):
                scored = self.score(completions, _rows(kwargs, len(completions)), log_metric)
                return [fn(x) for x in scored]

            reward.__name__ = name
            return reward

        def verifier_reward(
            completions: list[Any], log_metric: Callable | None = None, **kwargs: Any
        ) -> list[float | None]:
            self.score(completions, _rows(kwargs, len(completions)), log_metric)
            assert self._verified is not None
            return list(self._verified.rewards)

        verifier_reward.__name__ = VERIFIER
        table = reward_table(s)
        known = [*table, *([VERIFIER] if self.verifier is not None else [])]
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"unknown RLVR reward(s) {unknown}; known: {sorted(known)}")
        return [verifier_reward if n == VERIFIER else make(n, table[n]) for n in names]


def reward_table(s: RlvrSettings) -> dict[str, Callable[[Scored], float | None]]:
    """Each RLVR reward by name, as a function of a scored completion."""
    return {
        "pass_fraction": lambda x: x.pass_fraction,
        "all_pass": lambda x: x.all_pass,
        "lint": lambda x: lint_reward(x, s.lint_per_violation),
        "combined": lambda x: combined_reward(x, s.lint_per_violation, s.lint_weight),
    }


def zero_variance_share(rewards: Sequence[float | None], group_size: int) -> float | None:
    """The share of GRPO groups (consecutive runs of `group_size` rewards, one prompt's
    rollouts) whose rewards are all equal: no advantage, no gradient from that group. None
    (no reward) is left out, as TRL leaves NaN out of a group's mean and deviation; a group
    with fewer than two rewards left has nothing to compare and counts as zero variance.
    None when the batch is not whole groups (nothing to say)."""
    if group_size < 2 or not rewards or len(rewards) % group_size:
        return None
    groups = [rewards[i : i + group_size] for i in range(0, len(rewards), group_size)]
    flat = 0
    for g in groups:
        values = [v for v in g if v is not None]
        if len(values) < 2 or max(values) - min(values) <= 1e-9:
            flat += 1
    return flat / len(groups)


CODE_REWARDS: tuple[str, ...] = ("pass_fraction", "all_pass", "lint", "combined")
VERIFIER = "verifier"  # the verifier's reward (pipeline.train.verifier_reward)
# The dataset columns a reward needs per completion: the problem id and its judge fields.
ROW_COLUMNS: tuple[str, ...] = ("problem_id", *JUDGE_FIELDS)
VERIFIER_COLUMNS: tuple[str, ...] = ("query",)  # what the verifier reads: the statement


def step_diagnostics(scored: Sequence[Scored], texts: Sequence[str]) -> dict[str, float]:
    """Per-step numbers for the trainer log: pass@1, verdict histogram, Ruff profile, lengths."""
    n = len(scored)
    judged = [s for s in scored if s.judged]
    out: dict[str, float] = {
        "rlvr/completion_chars": sum(len(t) for t in texts) / n if n else 0.0,
        "rlvr/sandbox_se": float(sum(s.verdict == "SE" for s in scored)),
        "rlvr/failed_batches": float(any(s.verdict == BATCH_FAILED for s in scored)),
    }
    if judged:  # pass@1 over the completions the sandbox could judge
        out["rlvr/pass_at_1"] = sum(s.verdict == "AC" for s in judged) / len(judged)
    for verdict, count in Counter(s.verdict for s in scored).items():
        out[f"rlvr/verdict/{verdict}"] = count / n
    linted = [s.lint for s in scored if s.lint is not None]
    if linted:
        out["rlvr/ruff/violations"] = sum(r.violations for r in linted) / len(linted)
        for prefix, count in Counter(
            p for r in linted for p, c in r.by_prefix.items() for _ in range(c)
        ).items():
            out[f"rlvr/ruff/{prefix}"] = count / len(linted)
    return out


def _batch_key(texts: Sequence[str], problem_ids: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t, p in zip(texts, problem_ids, strict=True):
        h.update(p.encode() + b"\x00" + t.encode("utf-8", "surrogatepass") + b"\x01")
    return h.hexdigest()
