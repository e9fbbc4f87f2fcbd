"""The Best-of-N numbers: per-problem facts, then means with bootstrap intervals per language.

Per problem, with c of its N samples correct (AC in the sandbox):

- pass@1 = c / N: what a random pick scores in expectation, so `random` is pass@1 exactly;
  `random_draw` is one seeded draw per problem, as Aletheia's script reports it;
- oracle = pass@N (some sample is correct);
- verifier: its pick is correct; a problem with no parseable verdict is a failed pick
  (Aletheia's rule), and is also counted apart (`unparseable`), with the pass@1 over the
  parseable picks beside it;
- shortest: the shortest program (characters; ties and an all-empty list to the first);
- majority: the first sample of the largest group of samples with the same outputs on the
  tests' inputs (probes.py; no sample with an output: the first sample, counted apart);
- logprob: the highest mean token log-probability, when the samples carry them (a sample
  without one never wins; a problem none of whose samples has one: the first sample).

Each method's mean comes with a percentile bootstrap interval over problems (seeded), and
the verifier's gain over pass@1 with a paired one. The curve (accuracy against n) reads every
selector, oracle and random included, on each problem's first n samples, so at every n
nothing is above the oracle, at n = 1 every selector is the first sample, and at n = N the
curve is the table.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.bestofn.judging import Verdicts
from pipeline.bestofn.probes import majority_pick
from pipeline.bestofn.samples import ProblemSamples, Sample
from pipeline.bestofn.verifier import Choice
from pipeline.policy_eval.config import BootstrapSettings
from pipeline.policy_eval.passk import bootstrap_interval, paired_bootstrap_difference

METHODS = ("verifier", "random", "oracle", "majority", "shortest", "logprob", "random_draw")
LABELS = {
    "verifier": "verifier pick",
    "random": "random pick (= pass@1)",
    "oracle": "oracle (pass@N)",
    "majority": "majority by output",
    "shortest": "shortest program",
    "logprob": "highest mean log-prob",
    "random_draw": "one random draw (Aletheia's)",
}


def shortest_pick(samples: Sequence[Sample]) -> int:
    lengths = [(len(s.code.strip()), i) for i, s in enumerate(samples) if s.code.strip()]
    return min(lengths)[1] if lengths else 0


def logprob_pick(samples: Sequence[Sample]) -> int | None:
    """The highest mean log-prob among the samples that carry one (ties to the first); None
    when none does."""
    scored = [(s.mean_logprob, i) for i, s in enumerate(samples) if s.mean_logprob is not None]
    if not scored:
        return None
    best = max(lp for lp, _ in scored)
    return next(i for lp, i in scored if lp == best)


def has_logprobs(problems: Sequence[ProblemSamples]) -> bool:
    """Whether the samples carry log-probabilities at all (the baseline is reported then)."""
    return any(s.mean_logprob is not None for ps in problems for s in ps.samples)


@dataclass(frozen=True)
class Picks:
    """The picks of every selector on one problem's first n samples."""

    verifier: int | None
    majority: int | None  # None: no sample had an output (the first sample stands in)
    shortest: int
    logprob: int | None


def picks_at(
    ps: ProblemSamples, n: int, choice: Choice | None, signatures: Sequence[Any] | None
) -> Picks:
    first = ps.first(n)
    return Picks(
        verifier=choice.pick if choice is not None else None,
        majority=majority_pick(signatures[:n]) if signatures is not None else None,
        shortest=shortest_pick(first),
        logprob=logprob_pick(first),
    )


def problem_facts(
    problems: Sequence[ProblemSamples],
    verdicts: Verdicts,
    choices: dict[int, list[Choice]],
    n: int,
    seed: int,
) -> list[dict[str, Any]]:
    """One row per problem: its samples' verdicts, each selector's pick and whether it is
    correct at N = `n`, and the curve's points (every n with a verifier choice)."""
    rows = []
    logprobs = has_logprobs(problems)

    def by_logprob(correct: Sequence[bool], pick: int | None) -> float | None:
        return _hit(correct, pick if pick is not None else 0) if logprobs else None

    for p, ps in enumerate(problems):
        correct = verdicts.correct(p)
        sigs = verdicts.signatures[p] if verdicts.signatures is not None else None
        main = picks_at(ps, n, choices[n][p], sigs)
        draw = random.Random(f"{seed}:{ps.problem.problem_id}").randrange(n)
        curve = {}
        for m in range(1, n + 1):
            pk = picks_at(ps, m, choices[m][p] if m in choices else None, sigs)
            curve[m] = {
                "verifier": None if m not in choices else _hit(correct, pk.verifier),
                "majority": _hit(correct, pk.majority if pk.majority is not None else 0),
                "shortest": _hit(correct, pk.shortest),
                "logprob": by_logprob(correct, pk.logprob),
                "oracle": float(any(correct[:m])),
                "random": sum(correct[:m]) / m,
            }
        choice = choices[n][p]
        rows.append(
            {
                "problem_id": ps.problem.problem_id,
                "source_id": ps.problem.source_id,
                "language": ps.language,
                "samples": n,
                "verdicts": verdicts.verdicts[p],
                "correct": sum(correct),
                "verifier_pick": main.verifier,
                "unparseable": main.verifier is None,
                "verifier_responses": choice.responses,
                "verifier_unparseable_responses": choice.unparseable,
                "verifier_confidence": choice.confidence,
                "majority_pick": main.majority,
                "shortest_pick": main.shortest,
                "logprob_pick": main.logprob,
                "random_draw_pick": draw,
                "scores": {
                    "verifier": _hit(correct, main.verifier),
                    "random": sum(correct) / n,
                    "oracle": float(any(correct)),
                    "majority": _hit(correct, main.majority if main.majority is not None else 0),
                    "shortest": _hit(correct, main.shortest),
                    "logprob": by_logprob(correct, main.logprob),
                    "random_draw": _hit(correct, draw),
                },
                "curve": curve,
            }
        )
    return rows


def _hit(correct: Sequence[bool], pick: int | None) -> float:
    return float(pick is not None and correct[pick])


def _interval(values: list[float], boot: BootstrapSettings) -> dict[str, float]:
    lo, hi = bootstrap_interval(
        values, resamples=boot.resamples, confidence=boot.confidence, seed=boot.seed
    )
    mean = sum(values) / len(values) if values else float("nan")
    return {"value": mean, "ci_low": lo, "ci_high": hi}


def group_metrics(rows: Sequence[dict[str, Any]], boot: BootstrapSettings) -> dict[str, Any]:
    """Every method's mean and interval, the verifier's counts and its paired gain."""
    methods: dict[str, Any] = {}
    for m in METHODS:
        values = [r["scores"][m] for r in rows]
        if rows and all(v is not None for v in values):
            methods[m] = _interval(values, boot)
    picked = [r for r in rows if not r["unparseable"]]
    right = sum(r["scores"]["verifier"] == 1.0 for r in picked)
    responses = sum(r["verifier_responses"] for r in rows)
    bad = sum(r["verifier_unparseable_responses"] for r in rows)
    gain, lo, hi = paired_bootstrap_difference(
        [r["scores"]["random"] for r in rows],
        [r["scores"]["verifier"] for r in rows],
        resamples=boot.resamples,
        confidence=boot.confidence,
        seed=boot.seed,
    )
    return {
        "problems": len(rows),
        "methods": methods,
        "verifier_counts": {
            "picked_correct": right,
            "picked_wrong": len(picked) - right,
            "unparseable": len(rows) - len(picked),
            "unparseable_rate": (len(rows) - len(picked)) / len(rows) if rows else float("nan"),
            "pass@1_parseable": right / len(picked) if picked else float("nan"),
            "responses": responses,
            "unparseable_responses": bad,
        },
        "verifier_minus_random": {"value": gain, "ci_low": lo, "ci_high": hi},
        "majority_without_outputs": sum(r["majority_pick"] is None for r in rows),
    }


def curve_points(rows: Sequence[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """Mean accuracy of each selector on the first m samples, m = 1..n (None where a
    selector has no value for some problem: the verifier where the curve was not asked)."""
    out = []
    for m in range(1, n + 1):
        point: dict[str, Any] = {"n": m}
        for key in ("verifier", "random", "oracle", "majority", "shortest", "logprob"):
            values = [r["curve"][m][key] for r in rows]
            point[key] = None if any(v is None for v in values) else _mean(values)
        out.append(point)
    return out


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def summarize(rows: Sequence[dict[str, Any]], boot: BootstrapSettings, n: int) -> dict[str, Any]:
    """All problems, then each language alone, and the curve of all problems."""
    languages = sorted({r["language"] for r in rows})
    return {
        "all": group_metrics(rows, boot),
        "by_language": {
            lang: group_metrics([r for r in rows if r["language"] == lang], boot)
            for lang in languages
        },
        "curve": curve_points(rows, n),
    }
