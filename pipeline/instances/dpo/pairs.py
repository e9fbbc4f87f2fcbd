"""Chosen / rejected pairs, and the DPO row built from one.

`PairBalancer` is our earlier construction (`construction: on_policy`): chosen is a
response whose answer is the gold letter, rejected one that picked another letter or no
valid one, both as the model wrote them. Pairs are balanced across judge models: each
instance's chosen response comes from the judge with the fewest chosen so far among those
that got it right, and the rejected one from the same judge where it has one.
Aletheia's construction (the default) is in `aletheia.py`.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pipeline.common.answers import INVALID
from pipeline.common.verifier_prompt import preference_turns
from pipeline.instances.dpo.responses import Response

ChosenSource = Literal["sampled", "regenerated", "gold_spliced"]
# The routes a chosen response takes: a correct response of the first round (or of on_policy's
# fallback round), a correct one of the regeneration round, or a trace with the gold spliced in.
CHOSEN_SOURCES: tuple[str, ...] = ("sampled", "regenerated", "gold_spliced")


def sampled_source(response: Response) -> ChosenSource:
    """The route of a chosen response kept as a correct sample: which round wrote it."""
    return "regenerated" if response.round == "regenerate" else "sampled"


@dataclass
class Pair:
    instance_id: str
    variant: str
    chosen: Response  # the response the chosen text was made from
    rejected: Response
    chosen_text: str  # what the row stores (Aletheia: normalised to end in the gold box)
    chosen_source: ChosenSource
    rejected_text: str | None = None  # what the row stores; None: the response as written


@dataclass
class PairBalancer:
    """Keeps running counts so later instances favour judges that have fewer pairs so far."""

    seed: int
    chosen_by_judge: Counter[str] = field(default_factory=Counter)
    rejected_by_judge: Counter[str] = field(default_factory=Counter)

    def pick(
        self, instance_id: str, variant: str, gold: str, responses: Sequence[Response], k: int
    ) -> tuple[list[Pair], str | None]:
        """Up to `k` pairs from one instance's responses, and why fewer (None if k were made)."""
        usable = [r for r in responses if not r.finish_reason.startswith("error")]
        right = [r for r in usable if r.answer == gold]
        wrong = [r for r in usable if r.answer != gold]
        if not right:
            return [], "no_correct_response"
        if not wrong:
            return [], "no_incorrect_response"
        rng = random.Random(f"{self.seed}:{instance_id}:{variant}")
        rng.shuffle(right)
        rng.shuffle(wrong)
        pairs: list[Pair] = []
        used_texts: set[str] = set()
        while len(pairs) < k:
            right = [r for r in right if r.text not in used_texts]
            wrong = [r for r in wrong if r.text not in used_texts]
            if not right or not wrong:
                break
            chosen = min(right, key=lambda r: self.chosen_by_judge[r.judge_model])
            same = [
                r for r in wrong if r.judge_model == chosen.judge_model and r.text != chosen.text
            ]
            pool = same or [r for r in wrong if r.text != chosen.text]
            if not pool:
                break
            rejected = min(pool, key=lambda r: self.rejected_by_judge[r.judge_model])
            self.chosen_by_judge[chosen.judge_model] += 1
            self.rejected_by_judge[rejected.judge_model] += 1
            used_texts |= {chosen.text, rejected.text}
            pairs.append(
                Pair(instance_id, variant, chosen, rejected, chosen.text, sampled_source(chosen))
            )
        return pairs, None if len(pairs) == k else "fewer_distinct_responses"


def dpo_row(
    instance: Mapping[str, Any],
    pair: Pair,
    messages: list[dict[str, str]],
    split: str | None,
) -> dict[str, Any]:
    """The instance's columns + the pair, in TRL's conversational preference format
    (`preference_turns`): `messages` is the verifier prompt the responses answered (a Think
    prompt ends in its assistant pre-fill); `prompt` holds its turns without the pre-fill,
    `chosen` and `rejected` one assistant message each, the whole turn (the Think pre-fill
    `<think>\\n` included)."""
    prompt, chosen = preference_turns(messages, pair.chosen_text)
    _, rejected = preference_turns(messages, pair.rejected_text or pair.rejected.text)
    row = dict(instance)
    if split is not None:
        row["split"] = split
    row.update(
        prompt=prompt,
        chosen=chosen,
        rejected=rejected,
        rejected_answer=pair.rejected.answer or INVALID,
        judge_model=pair.chosen.judge_model,
        rejected_judge_model=pair.rejected.judge_model,
        prompt_variant=pair.variant,
        chosen_source=pair.chosen_source,
    )
    return row
