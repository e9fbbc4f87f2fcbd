"""Aletheia's DPO pairs (`src/thinkdpo_pairs.py`), in our own code.

Per instance and prompt variant:

- chosen: a correct response drawn at random from every judge's samples, cut after its
  first `</think>` and closed with `</think>\\n\\boxed{gold}` (`\\boxed{[[gold]]}` with
  `answer_format: bracketed`, as Aletheia's cerebrm-era rows) (`chosen_source: sampled`,
  or `regenerated` when it came from the regeneration round, which samples again the
  instances whose first-round responses were all wrong or all right, as Aletheia's
  `--wrong-indices-file` round); where no judge answered correctly in any round, a response
  of the strong judge closed the same way, so the gold answer is spliced after its
  reasoning (`gold_spliced`);
- rejected: an incorrect response (another letter, or no valid answer at all) of the
  rejected-side judge with the most quota left (equal quotas of n_instances // judges,
  ties in the configured order), drawn at random among that judge's incorrect samples.

`rejected_form` (ours; default `as_sampled`, Aletheia's) takes only rejected responses that
picked a wrong letter (`answered`), and with `closed` also closes a Think one the way the
chosen is (cut after its first `</think>`, then its own letter's box), so the two turns of a
pair differ in their reasoning and letter, not in their form (dpo/cues.py).

Two slips of the reference are not reproduced: where none of the rejected-side judges has
an incorrect response, Aletheia reuses the previous instance's rejected text; here the
instance yields no pair and is counted. The Instruct variant (no think tags; Aletheia's
DPO is Think only) keeps a sampled chosen as written and has no gold splice.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.common.answers import AnswerFormat, answer_box
from pipeline.instances.dpo.config import RejectedForm
from pipeline.instances.dpo.pairs import ChosenSource, Pair, sampled_source
from pipeline.instances.dpo.responses import Response

THINK_CLOSE = "</think>"


def close_with_answer(text: str, gold: str, answer_format: AnswerFormat = "letter") -> str:
    """`text` up to its first `</think>` (all of it if none), then `</think>\\n` and the
    gold box (`\\boxed{A}`, or `\\boxed{[[A]]}` bracketed: `thinkdpo_pairs.py` writes the
    dataset's `chosen_answer`, which was `[[A]]` there)."""
    return text.split(THINK_CLOSE)[0] + THINK_CLOSE + "\n" + answer_box(gold, answer_format)


@dataclass
class RejectedQuotas:
    """Equal quotas per rejected-side judge; the judge with the most left is asked first."""

    judges: list[str]
    remaining: dict[str, int] = field(default_factory=dict)

    @classmethod
    def equal(cls, judges: Sequence[str], n_instances: int) -> RejectedQuotas:
        if not judges:
            raise ValueError("rejected judges: none configured")
        quota = n_instances // len(judges)
        return cls(list(judges), {j: quota for j in judges})

    def order(self) -> list[str]:
        """Most quota left first; ties keep the configured order (a stable sort)."""
        return sorted(self.judges, key=lambda j: -self.remaining[j])

    def take(self, judge: str) -> None:
        self.remaining[judge] -= 1


def pick_pair(
    instance_id: str,
    variant: str,
    gold: str,
    responses: Sequence[Response],
    strong_judge: str,
    quotas: RejectedQuotas,
    seed: int,
    answer_format: AnswerFormat = "letter",
    rejected_form: RejectedForm = "as_sampled",
) -> tuple[Pair | None, str | None]:
    """One pair for an instance, or None and why not."""
    usable = [r for r in responses if not r.finish_reason.startswith("error")]
    rng = random.Random(f"{seed}:{instance_id}:{variant}")
    right = [r for r in usable if r.answer == gold]
    if right:
        chosen = rng.choice(right)
        source: ChosenSource = sampled_source(chosen)
    else:
        if variant != "think":
            return None, "no_correct_response_instruct"
        strong = [r for r in usable if r.judge_model == strong_judge]
        if not strong:
            return None, "no_correct_response_and_no_strong_trace"
        chosen, source = rng.choice(strong), "gold_spliced"
    answered = rejected_form != "as_sampled"
    for judge in quotas.order():
        wrong = [r for r in usable if r.judge_model == judge and r.answer != gold]
        wrong = [r for r in wrong if r.answer is not None] if answered else wrong
        if wrong:
            rejected = rng.choice(wrong)
            quotas.take(judge)
            break
    else:
        why = "answered_incorrect" if answered else "incorrect"
        return None, f"no_{why}_response_from_rejected_judges"
    think = variant == "think"
    text = close_with_answer(chosen.text, gold, answer_format) if think else chosen.text
    rejected_text = (
        close_with_answer(rejected.text, rejected.answer, answer_format)  # type: ignore[arg-type]
        if think and rejected_form == "closed"
        else None
    )
    return Pair(instance_id, variant, chosen, rejected, text, source, rejected_text), None
