"""Score verifier responses against the dataset: Aletheia's protocol first, vote shares second."""

from __future__ import annotations

from typing import Any

from pipeline.common.answers import parse_answer
from pipeline.evaluate.metrics import Judged, split_metrics
from pipeline.evaluate.protocol import (
    RankedList,
    best_of_k_accuracy,
    majority_accuracy,
    ranking_metrics,
    top1_accuracy,
    verdict_from_pick,
)
from pipeline.evaluate.responses import InstanceResponses


def judged_rows(
    instances: list[dict[str, Any]], grouped: dict[int, InstanceResponses]
) -> list[Judged]:
    """The listwise picks per instance (rows with listwise responses, in row order)."""
    out = []
    for row in sorted(grouped):
        texts = grouped[row].listwise
        if not texts:
            continue
        inst = instances[row]
        out.append(
            Judged(
                prompt_id=inst["prompt_id"],
                gold=inst["chosen_answer"],
                pass_rates=tuple(inst["pass_rates"]),
                picks=tuple(parse_answer(t, inst["num_candidates"]) for t in texts),
                adversarial=tuple(inst["adversarial"]),
                problem_id=inst["problem_id"],
                instance_id=inst.get("instance_id") or "",
                source_instance_id=inst.get("source_instance_id"),
            )
        )
    return out


def ranked_lists(
    instances: list[dict[str, Any]], grouped: dict[int, InstanceResponses]
) -> list[RankedList]:
    """Round-robin verdicts of each list that has any (each pair prompt has 2 candidates)."""
    out = []
    for row in sorted(grouped):
        pairs = grouped[row].pairs
        if not pairs:
            continue
        verdicts = tuple(
            verdict_from_pick(i, j, parse_answer(text, 2)) for (i, j), text in sorted(pairs.items())
        )
        out.append(RankedList(tuple(instances[row]["pass_rates"]), verdicts))
    return out


def aletheia_metrics(judged: list[Judged], lists: list[RankedList]) -> dict[str, Any]:
    golds = [j.gold for j in judged]
    picks = [j.picks for j in judged]
    ks = sorted({len(p) for p in picks})
    responses = sum(len(p) for p in picks)
    return {
        "instances": len(judged),
        "k": ks[0] if len(ks) == 1 else ks,  # a list when instances got different K
        "top1_accuracy": top1_accuracy(golds, picks),
        "majority_accuracy": majority_accuracy(golds, picks),
        "best_of_k_accuracy": best_of_k_accuracy(golds, picks),
        "invalid_rate": (
            sum(p is None for ps in picks for p in ps) / responses if responses else float("nan")
        ),
    } | ranking_metrics(lists)


def score_split(
    instances: list[dict[str, Any]], grouped: dict[int, InstanceResponses]
) -> tuple[dict[str, Any], list[Judged]]:
    """{"aletheia": ..., "vote_share": ...} for one split, and its judged rows (for flips)."""
    judged = judged_rows(instances, grouped)
    lists = ranked_lists(instances, grouped)
    return {
        "aletheia": aletheia_metrics(judged, lists),
        "vote_share": split_metrics(judged),
    }, judged
