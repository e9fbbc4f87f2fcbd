"""Ask the verifier: build each prompt with the project's verifier prompt builder, generate
through a sampling backend (transformers, an OpenAI-compatible server such as vLLM, offline
vLLM), read each response with the project's answer reader, and turn the votes into picks
(selection.py).

Every prompt of a round goes to the backend in one call (the transformers backend batches
them, a server stays full); each prompt has its own seed, derived from the run's seed, the
problem and the prompt's tag, so a prompt's responses do not depend on what else was asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.bestofn.config import MAX_LIST, BestOfNConfig
from pipeline.bestofn.samples import ProblemSamples
from pipeline.bestofn.selection import (
    Vote,
    knockout_groups,
    pair_orders,
    pairwise_pick,
    plurality,
    read_vote,
    vote_share,
)
from pipeline.common.answers import list_options
from pipeline.common.progress import track
from pipeline.common.verifier_prompt import PromptSpec, build_messages
from pipeline.sampling.backends.base import Backend, GenerationRequest
from pipeline.sampling.prompts import problem_text
from pipeline.sampling.seeds import derive_seed


@dataclass(frozen=True)
class Ask:
    """One prompt: `members` (sample positions) shown as candidates A, B, ... of `problem`."""

    problem: int  # index into the run's problems
    members: tuple[int, ...]
    tag: str  # names the prompt within its problem (and seeds it)


@dataclass(frozen=True)
class Choice:
    """The verifier's pick among a problem's first n samples, and what it rests on."""

    pick: int | None  # a sample position; None: no parseable verdict (a failed pick)
    responses: int  # verifier responses read for it
    unparseable: int  # of which no valid verdict
    confidence: float | None = None  # list: the share of valid votes for the pick


def prompt_spec(cfg: BestOfNConfig) -> PromptSpec:
    return PromptSpec(
        style=cfg.style,
        template=cfg.prompt_template,
        system_template=cfg.system_template,
        task="score" if cfg.scoring else "select",
        max_candidates=MAX_LIST,
    )


class Verifier:
    """Asks a backend; keeps every response (`log`) for the run's verifier_responses.jsonl."""

    def __init__(
        self, backend: Backend, cfg: BestOfNConfig, problems: Sequence[ProblemSamples]
    ) -> None:
        self.backend, self.cfg, self.problems = backend, cfg, problems
        self.spec = prompt_spec(cfg)
        self.log: list[dict[str, Any]] = []

    def request(self, ask: Ask) -> GenerationRequest:
        ps = self.problems[ask.problem]
        shown = [ps.samples[m] for m in ask.members]
        cfg = self.cfg
        pid = ps.problem.problem_id
        return GenerationRequest(
            request_id=f"{ask.problem}:{ask.tag}",
            messages=build_messages(
                problem_text(ps.problem),
                [s.code for s in shown],
                [s.language for s in shown],
                self.spec,
            ),
            n=cfg.k,
            temperature=cfg.temperature,
            top_p=cfg.top_p,
            max_tokens=cfg.max_new_tokens,
            seed=derive_seed(cfg.seed, "best-of-n", pid, ask.tag),
            answer_choices=list(list_options(len(shown))) if cfg.constrain_answer else None,
        )

    def ask(self, asks: Sequence[Ask], what: str) -> list[list[Vote]]:
        """Each ask's K votes (positions within its members), in the order of `asks`."""
        if not asks:
            return []
        requests = [self.request(a) for a in asks]
        by_id = {q.request_id: i for i, q in enumerate(requests)}
        texts: list[list[str]] = [[] for _ in asks]
        tracker = track(f"verifier responses ({what})", sum(q.n for q in requests))
        for result in self.backend.generate(requests, progress=self.cfg.progress):
            tracker.advance(len(result.generations))
            texts[by_id[result.request_id]] = [
                "" if g.finish_reason.startswith("error") else g.text for g in result.generations
            ]
        short = [q.request_id for q, t in zip(requests, texts, strict=True) if len(t) != q.n]
        if short:
            raise RuntimeError(
                f"backend {self.backend.name} returned no/short results for {short[:5]}"
            )
        out = []
        for a, got in zip(asks, texts, strict=True):
            votes = [
                read_vote(t, len(a.members), scoring=self.cfg.scoring, rule=self.cfg.answer_rule)
                for t in got
            ]
            pid = self.problems[a.problem].problem.problem_id
            self.log += [
                {
                    "problem_id": pid,
                    "prompt": a.tag,
                    "shown": list(a.members),
                    "response": r,
                    "text": t,
                    "vote": None if v is None else a.members[v],
                }
                for r, (t, v) in enumerate(zip(got, votes, strict=True))
            ]
            out.append(votes)
        return out


def _listwise(v: Verifier, members: dict[int, tuple[int, ...]], tag: str) -> dict[int, Choice]:
    """One list prompt per problem over its `members`: the plurality of the K votes."""
    asks = [Ask(p, m, tag) for p, m in members.items()]
    out = {}
    for a, votes in zip(asks, v.ask(asks, tag), strict=True):
        pick = plurality(votes)
        out[a.problem] = Choice(
            pick=None if pick is None else a.members[pick],
            responses=len(votes),
            unparseable=sum(x is None for x in votes),
            confidence=vote_share(votes),
        )
    return out


def _knockout(v: Verifier, n: int, size: int) -> dict[int, Choice]:
    alive = {p: tuple(range(n)) for p in range(len(v.problems))}
    responses = dict.fromkeys(alive, 0)
    bad = dict.fromkeys(alive, 0)
    last: dict[int, float | None] = dict.fromkeys(alive)
    for rnd in range(1, n + 1):
        if all(len(m) <= 1 for m in alive.values()):
            break
        asks = [
            Ask(p, group, f"knockout:n={n}:round={rnd}:group={g}")
            for p, members in alive.items()
            if len(members) > 1
            for g, group in enumerate(knockout_groups(members, size))
            if len(group) > 1
        ]
        winners: dict[int, list[int]] = {p: [] for p, m in alive.items() if len(m) > 1}
        for p, members in alive.items():  # a list of one goes on without a prompt
            if len(members) > 1:
                winners[p] += [g[0] for g in knockout_groups(members, size) if len(g) == 1]
        for a, votes in zip(asks, v.ask(asks, f"knockout n={n} round {rnd}"), strict=True):
            responses[a.problem] += len(votes)
            bad[a.problem] += sum(x is None for x in votes)
            pick = plurality(votes)
            last[a.problem] = vote_share(votes)
            if pick is not None:
                winners[a.problem].append(a.members[pick])
        for p, w in winners.items():
            alive[p] = tuple(sorted(w))
    return {
        p: Choice(m[0] if len(m) == 1 else None, responses[p], bad[p], last[p])
        for p, m in alive.items()
    }


def select(v: Verifier, sizes: Sequence[int]) -> dict[int, list[Choice]]:
    """The verifier's choice on every problem's first n samples, for each n in `sizes`
    (n -> one Choice per problem, in the problems' order). n = 1 needs no prompt."""
    cfg, problems = v.cfg, v.problems
    out: dict[int, list[Choice]] = {}
    if cfg.mode == "pairwise":
        most = max(sizes)
        orders = pair_orders(most, cfg.both_orders)
        asks = [Ask(p, (a, b), f"pair:{a},{b}") for p in range(len(problems)) for a, b in orders]
        votes = v.ask(asks, "pairs")
        per_problem: list[dict[tuple[int, int], list[Vote]]] = [{} for _ in problems]
        for a, vs in zip(asks, votes, strict=True):
            per_problem[a.problem][a.members] = vs  # type: ignore[index]
        for n in sizes:
            choices = []
            for verdicts in per_problem:
                pick, _ = pairwise_pick(verdicts, n)
                inside = [vs for (a, b), vs in verdicts.items() if a < n and b < n]
                choices.append(
                    Choice(
                        pick=0 if n == 1 else pick,
                        responses=sum(len(x) for x in inside),
                        unparseable=sum(x is None for vs in inside for x in vs),
                    )
                )
            out[n] = choices
        return out
    for n in sizes:
        if n == 1:
            out[n] = [Choice(0, 0, 0) for _ in problems]
        elif cfg.mode == "knockout":
            got = _knockout(v, n, cfg.knockout_size)
            out[n] = [got[p] for p in range(len(problems))]
        else:
            got = _listwise(v, {p: tuple(range(n)) for p in range(len(problems))}, f"list:n={n}")
            out[n] = [got[p] for p in range(len(problems))]
    return out
