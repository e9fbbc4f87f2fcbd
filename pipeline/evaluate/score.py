"""Score verifier responses against the dataset: Aletheia's protocol first, vote shares second,
each beside what a random and a fixed-letter verifier would score (baselines.py), and a flag
on a split whose answers are mostly invalid."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pipeline.common.answers import AnswerRule, gold_letter, pair_answer, parse_answer, raw_answer
from pipeline.evaluate.baselines import (
    fixed_letter_answers,
    letters_in,
    random_aletheia,
    random_sc_curve,
    random_vote_share,
)
from pipeline.evaluate.calibration import calibration
from pipeline.evaluate.metrics import Judged, split_metrics
from pipeline.evaluate.protocol import (
    RankedList,
    best_of_k_accuracy,
    majority_accuracy,
    ranking_metrics,
    self_consistency_curve,
    top1_accuracy,
    verdict_from_pick,
)
from pipeline.evaluate.responses import InstanceResponses


def judged_rows(
    instances: list[dict[str, Any]],
    grouped: dict[int, InstanceResponses],
    rule: AnswerRule = "after_think",
) -> list[Judged]:
    """The listwise picks per instance (rows with listwise responses, in row order), each
    answer read by `rule` (pipeline/common/answers.py)."""
    out = []
    for row in sorted(grouped):
        texts = grouped[row].listwise
        if not texts:
            continue
        inst = instances[row]
        out.append(
            Judged(
                prompt_id=inst["prompt_id"],
                gold=gold_letter(inst["chosen_answer"]),
                pass_rates=tuple(inst["pass_rates"]),
                picks=tuple(parse_answer(t, inst["num_candidates"], rule=rule) for t in texts),
                boxes=tuple(raw_answer(t, rule) for t in texts),
                adversarial=tuple(inst["adversarial"]),
                problem_id=inst["problem_id"],
                instance_id=inst.get("instance_id") or "",
                source_instance_id=inst.get("source_instance_id"),
            )
        )
    return out


def ranked_lists(
    instances: list[dict[str, Any]],
    grouped: dict[int, InstanceResponses],
    rule: AnswerRule = "after_think",
) -> list[RankedList]:
    """Round-robin verdicts of each list that has any (each pair prompt has 2 candidates;
    its answer stripped and upper-cased, as Aletheia's `ranking_consistency.py`)."""
    out = []
    for row in sorted(grouped):
        pairs = grouped[row].pairs
        if not pairs:
            continue
        verdicts = tuple(
            verdict_from_pick(i, j, pair_answer(text, rule))
            for (i, j), text in sorted(pairs.items())
        )
        out.append(RankedList(tuple(instances[row]["pass_rates"]), verdicts))
    return out


def aletheia_metrics(judged: list[Judged], lists: list[RankedList]) -> dict[str, Any]:
    golds = [j.gold for j in judged]
    picks = [j.picks for j in judged]
    answers = [j.answers for j in judged]  # raw box contents: what the majority vote counts
    ks = sorted({len(p) for p in picks})
    responses = sum(len(p) for p in picks)
    return {
        "instances": len(judged),
        "k": ks[0] if len(ks) == 1 else ks,  # a list when instances got different K
        "top1_accuracy": top1_accuracy(golds, answers),
        "majority_accuracy": majority_accuracy(golds, answers),
        "best_of_k_accuracy": best_of_k_accuracy(golds, answers),
        "responses": responses,
        "invalid_rate": (
            sum(p is None for ps in picks for p in ps) / responses if responses else float("nan")
        ),
        "sc_curve": self_consistency_curve(golds, answers),
    } | ranking_metrics(lists)


def baselines(judged: list[Judged], lists: list[RankedList]) -> dict[str, Any]:
    """The random verifier's expected metrics, and those of `always A` and of the best letter."""

    def fixed(letter: str) -> dict[str, Any]:
        j, rl = fixed_letter_answers(letter, judged, lists)
        aletheia = aletheia_metrics(j, rl)
        aletheia.pop("sc_curve")  # a fixed letter's curve is flat: not worth the space
        return {"letter": letter, "aletheia": aletheia, "vote_share": split_metrics(j)}

    # A fixed letter's top-1 is the share of instances whose gold it is: pick the best from
    # that (ties to the earlier letter), then score only A and it in full.
    golds = Counter(j.gold for j in judged)
    best = max(letters_in(judged), key=lambda x: golds[x], default=None)
    always_a = fixed("A") if judged else None
    return {
        "random": {
            "aletheia": random_aletheia(judged, lists) | {"sc_curve": random_sc_curve(judged)},
            "vote_share": random_vote_share(judged),
        },
        "always_a": always_a,
        "best_letter": always_a if best == "A" else fixed(best) if best else None,
    }


def invalid_flags(aletheia: dict[str, Any], above: float) -> list[str]:
    """A line per kind of answer (listwise, pair) whose invalid share is above `above`."""
    flags = []
    responses = aletheia.get("responses", 0)
    if responses and aletheia["invalid_rate"] > above:
        flags.append(
            f"mostly invalid: {aletheia['invalid_rate']:.0%} of {responses} listwise responses "
            f"have no valid answer (flagged above {above:.0%}); they count as wrong answers"
        )
    verdicts = aletheia.get("pair_verdicts", 0)
    if verdicts and aletheia["pair_verdicts_invalid"] / verdicts > above:
        flags.append(
            f"mostly invalid: {aletheia['pair_verdicts_invalid'] / verdicts:.0%} of {verdicts} "
            f"pair-prompt answers have no valid letter (flagged above {above:.0%}); tau-b rests on "
            f"{aletheia['lists_scored']} of {aletheia['lists']} lists, pairwise accuracy on "
            f"{aletheia['pairwise_counted']} pair answers"
        )
    return flags


def score_split(
    instances: list[dict[str, Any]],
    grouped: dict[int, InstanceResponses],
    invalid_flag_above: float = 0.5,
    rule: AnswerRule = "after_think",
) -> tuple[dict[str, Any], list[Judged]]:
    """{"aletheia", "vote_share", "calibration", "baselines", "flags"} for one split, and its
    judged rows."""
    judged = judged_rows(instances, grouped, rule)
    lists = ranked_lists(instances, grouped, rule)
    aletheia = aletheia_metrics(judged, lists)
    return {
        "aletheia": aletheia,
        "vote_share": split_metrics(judged),
        "calibration": calibration(judged),
        "baselines": baselines(judged, lists),
        "flags": invalid_flags(aletheia, invalid_flag_above),
    }, judged
