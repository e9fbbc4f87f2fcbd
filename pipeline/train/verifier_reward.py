"""A code verifier as the RLVR reward, as Aletheia's codegen GRPO (`src/codegen_grpotrainer.py`).

The verifier was trained to pick the correct program of a list; as a reward it sees two
programs at a time (the list of two, its N=2 case), in the recipe Aletheia took from BRPO
(Writing-Zero):

- per GRPO group (one problem's `num_generations` rollouts, consecutive in TRL's batch) one
  rollout, drawn at random, is the group's reference;
- every other rollout is shown to the verifier beside the reference in both orders (it as A
  and the reference as B, then the other way round), `votes` verdicts per order, with the
  project's verifier prompt (pipeline.common.verifier_prompt: the problem's `query`, the two
  programs in fenced blocks) and read by the project's answer reader (pipeline.common.answers);
- a rollout picked in every one of its 2 x votes verdicts earns +1, any other -1 (a verdict
  with no valid answer is not a win), the reference 0;
- BRPO advantages (`rlvr.verifier.advantage`, on when the verifier is the only reward): a
  rollout's advantage is its reward as it is, not normalised, and a group whose rewards lean
  too far one way (|sum of rewards| / group size > `brpo_filter_threshold`) contributes no
  gradient. With other rewards beside it (`advantage: group`), the verifier's reward is summed
  with them, weighted, and normalised per group as any reward is.

What a rollout shows the verifier: the program extracted from it (the sampling stage's
extractor, as the test rewards use), or the whole completion when there is none (Aletheia
shows the raw text then).

Where we differ: a verdict that never comes (a server down, a timeout) gives its rollout no
reward signal (None: TRL leaves it out; BRPO advantage 0); a batch with none at all is counted
in `rlvr/verifier/failed_batches`. Aletheia reads a failed call as "no preference" and so gives
every rollout -1.

Reward hacking made visible: the rollouts are judged by the sandbox as well (the test
rewards' scorer, whatever their weight), and each step logs how often the verifier rewarded
a program the tests fail, how often it penalised one they pass, and, over the pairs where
exactly one program passes, how often its verdict picked that one (`verifier_metrics`).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.common.answers import answer_choices, parse_answer
from pipeline.common.verifier_prompt import build_messages
from pipeline.sampling.backends.base import Backend, GenerationRequest
from pipeline.sampling.seeds import derive_seed
from pipeline.train.config import VerifierRewardSettings

log = logging.getLogger(__name__)

ORDERS = ("AB", "BA")  # AB: the rollout is candidate A, the reference B; BA: the other way
FAILED = "failed"  # a verdict the verifier never gave (its request failed): no signal


@dataclass(frozen=True)
class Pair:
    """One verifier prompt: rollout `index` (in the batch) against its group's reference."""

    index: int
    reference: int
    order: str  # AB | BA


@dataclass(frozen=True)
class VerifierScores:
    rewards: list[float | None]  # per rollout: +1, -1, 0 (the reference), None (no signal)
    advantages: list[float] | None  # BRPO's, per rollout; None unless BRPO
    metrics: dict[str, float]


def draw_references(n: int, group_size: int, rng: random.Random) -> list[int]:
    """Each group's reference: the batch index of one of its rollouts, drawn uniformly."""
    if group_size < 2 or n % group_size:
        raise ValueError(
            f"verifier reward: {n} rollouts are not whole groups of {group_size} "
            "(rlvr.num_generations)"
        )
    return [g + rng.randrange(group_size) for g in range(0, n, group_size)]


def pairs_of(references: Sequence[int], group_size: int) -> list[Pair]:
    """Every rollout but the reference, against its group's reference, in both orders."""
    return [
        Pair(i, ref, order)
        for ref in references
        for i in range(ref - ref % group_size, ref - ref % group_size + group_size)
        if i != ref
        for order in ORDERS
    ]


def wins(pair: Pair, verdict: str | None) -> bool:
    """Whether the verdict picked the rollout (not the reference)."""
    return verdict == ("A" if pair.order == "AB" else "B")


def brpo_rewards(
    n: int, references: Sequence[int], pairs: Sequence[Pair], verdicts: Sequence[list[str | None]]
) -> list[float | None]:
    """+1 for a rollout that won every verdict of both its prompts, -1 otherwise, 0 for the
    references; None (no signal) for a rollout one of whose verdicts never came (FAILED).
    `verdicts[k]`: the votes on `pairs[k]`."""
    won: dict[int, bool] = {}
    failed: set[int] = set()
    for pair, votes in zip(pairs, verdicts, strict=True):
        won[pair.index] = won.get(pair.index, True) and all(wins(pair, v) for v in votes)
        if FAILED in votes:
            failed.add(pair.index)
    rewards: list[float | None] = [
        None if i in failed else 1.0 if won.get(i) else -1.0 for i in range(n)
    ]
    for ref in references:
        rewards[ref] = 0.0
    return rewards


def brpo_advantages(
    rewards: Sequence[float | None], group_size: int, threshold: float
) -> tuple[list[float], list[bool]]:
    """BRPO: the advantage is the reward as it is; a group with |sum| / size > `threshold`
    is dropped (advantages 0). A reward of None (no signal) counts as 0 and gets advantage 0.
    Returns (advantages, kept per group)."""
    advantages: list[float] = []
    kept: list[bool] = []
    for g in range(0, len(rewards), group_size):
        group = [0.0 if r is None else r for r in rewards[g : g + group_size]]
        keep = abs(sum(group)) / group_size <= threshold + 1e-9
        kept.append(keep)
        advantages += [r if keep else 0.0 for r in group]
    return advantages, kept


def verifier_metrics(
    rewards: Sequence[float | None],
    references: Sequence[int],
    passed: Sequence[bool | None],
    pairs: Sequence[Pair],
    verdicts: Sequence[list[str | None]],
) -> dict[str, float]:
    """The verifier's rewards against the tests' verdicts (reward hacking made visible).

    Over the rollouts other than the references whose programs the sandbox judged
    (`passed[i]`: verdict AC; None when not judged):
    `reward_given_fail` = the share of the failing ones the verifier rewarded (+1),
    `penalty_given_pass` = the share of the passing ones it penalised (-1), `agreement` = the
    share where reward +1 and AC coincide, `win_rate` = the share rewarded. Over the verdicts:
    `invalid` = the share with no valid answer, and `pair_accuracy` = over the prompts whose two
    programs differ in passing, the share of verdicts that picked the passing one."""
    refs = set(references)
    scored = [
        (r > 0, p)
        for i, (r, p) in enumerate(zip(rewards, passed, strict=True))
        if i not in refs and r is not None
    ]
    judged = [(won, p) for won, p in scored if p is not None]
    failing = [won for won, p in judged if not p]
    passing = [won for won, p in judged if p]
    out: dict[str, float] = {}
    if scored:
        out["rlvr/verifier/win_rate"] = sum(won for won, _ in scored) / len(scored)
    if failing:
        out["rlvr/verifier/reward_given_fail"] = sum(failing) / len(failing)
    if passing:
        out["rlvr/verifier/penalty_given_pass"] = sum(not w for w in passing) / len(passing)
    if judged:
        out["rlvr/verifier/agreement"] = sum(won == p for won, p in judged) / len(judged)
    votes = [v for vs in verdicts for v in vs if v != FAILED]
    if votes:
        out["rlvr/verifier/invalid"] = sum(v is None for v in votes) / len(votes)
    right = total = 0
    for pair, vs in zip(pairs, verdicts, strict=True):
        a, b = passed[pair.index], passed[pair.reference]
        if a is None or b is None or a == b:
            continue
        for v in vs:
            if v != FAILED:
                total += 1
                right += wins(pair, v) == a  # the rollout passes: picking it is right
    if total:
        out["rlvr/verifier/pair_accuracy"] = right / total
    return out


class VerifierReward:
    """Rewards a batch of rollouts with a verifier's pairwise verdicts (module docstring).

    `backend`: where verdicts come from (pipeline.sampling.backends: transformers in this
    process, or an OpenAI-compatible server); built from the settings when not given, on first
    use, and closed by `close`."""

    def __init__(
        self,
        settings: VerifierRewardSettings,
        *,
        group_size: int,
        language: str,
        brpo: bool,
        backend: Backend | None = None,
    ) -> None:
        self.settings = settings
        self.group_size = group_size
        self.language = language
        self.brpo = brpo
        self._backend = backend
        self._rng = random.Random(settings.seed)
        self._batches = 0

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            from pipeline.sampling.backends.factory import make_backend
            from pipeline.sampling.config import ModelSource

            s = self.settings
            self._backend = make_backend(
                ModelSource(name="rlvr-verifier", model=s.model, tier="weak", backend=s.backend)
            )
        return self._backend

    def open(self) -> VerifierReward:
        """Build the backend now (when training starts): a verifier server that does not answer
        or a model that is not there stops the run in one line, before any step."""
        _ = self.backend
        return self

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None

    def requests(
        self, programs: Sequence[str], queries: Sequence[str], pairs: Sequence[Pair]
    ) -> list[GenerationRequest]:
        s = self.settings
        spec = s.prompt.spec()
        choices = answer_choices(2) if s.constrain_answer else None
        out = []
        for k, p in enumerate(pairs):
            a, b = (p.index, p.reference) if p.order == "AB" else (p.reference, p.index)
            messages = build_messages(
                queries[p.index], [programs[a], programs[b]], [self.language] * 2, spec
            )
            out.append(
                GenerationRequest(
                    request_id=f"verifier:{self._batches}:{k}",
                    messages=messages,
                    n=s.votes,
                    temperature=s.temperature,
                    top_p=s.top_p,
                    max_tokens=s.max_tokens,
                    seed=derive_seed(s.seed, self._batches, p.index, p.order),
                    answer_choices=choices,
                    chat_template_kwargs=s.chat_template_kwargs,
                )
            )
        return out

    @staticmethod
    def verdicts(backend: Backend, requests: Sequence[GenerationRequest]) -> list[list[str | None]]:
        """The votes on each request, read as Aletheia reads them (A, B or None), FAILED for a
        generation the backend could not make (a server error, a timeout)."""
        got: dict[str, list[str | None]] = {}
        for result in backend.generate(list(requests), progress=False):
            got[result.request_id] = [
                FAILED if g.finish_reason.startswith("error") else parse_answer(g.text, 2)
                for g in result.generations
            ]
        return [got.get(q.request_id, [FAILED] * q.n) for q in requests]

    def score(
        self,
        programs: Sequence[str],
        queries: Sequence[str],
        passed: Sequence[bool | None],
    ) -> VerifierScores:
        """Rewards (and BRPO advantages) for a batch: `programs[i]` is what rollout i shows the
        verifier (its program, or its text when it has none), `queries[i]` its problem,
        `passed[i]` whether the sandbox passed it (for the diagnostic only)."""
        start = time.perf_counter()
        n = len(programs)
        references = draw_references(n, self.group_size, self._rng)
        pairs = pairs_of(references, self.group_size)
        requests = self.requests(programs, queries, pairs)
        self._batches += 1
        backend = self.backend  # a verifier that cannot be built is an error, not "no signal"
        try:
            verdicts = self.verdicts(backend, requests)
        except Exception as e:  # noqa: BLE001 - a failed call is "no signal", counted
            log.warning("verifier reward: the verifier call failed, no reward this batch: %r", e)
            verdicts = [[FAILED] * q.n for q in requests]
        votes = [v for vs in verdicts for v in vs]
        if FAILED in votes:
            share = votes.count(FAILED) / len(votes)
            log.warning("verifier reward: %.0f%% of the verdicts never came: no reward for "
                        "their rollouts", 100 * share)  # fmt: skip
        rewards = brpo_rewards(n, references, pairs, verdicts)
        if all(r is None for i, r in enumerate(rewards) if i not in set(references)):
            rewards = [None] * n  # nothing came back: no signal for the references either
        metrics = verifier_metrics(rewards, references, passed, pairs, verdicts)
        metrics["rlvr/verifier/failed_batches"] = float(all(r is None for r in rewards))
        advantages = None
        if self.brpo:
            advantages, kept = brpo_advantages(
                rewards, self.group_size, self.settings.brpo_filter_threshold
            )
            metrics["rlvr/verifier/groups_dropped"] = 1 - sum(kept) / len(kept)
        metrics["rlvr/verifier/time_s"] = time.perf_counter() - start
        return VerifierScores(list(rewards), advantages, metrics)


def verifier_reward(settings: Any, backend: Backend | None = None) -> VerifierReward | None:
    """The verifier reward `settings` (RlvrSettings) asks for, or None."""
    if settings.verifier is None:
        return None
    return VerifierReward(
        settings.verifier,
        group_size=settings.num_generations,
        language=settings.language,
        brpo=settings.brpo,
        backend=backend,
    ).open()
