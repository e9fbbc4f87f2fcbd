"""The per-instance table beside the report: `instances.parquet`, one row per scored instance.

What each instance contributed to the split's numbers, so a metric can be traced to the
rows behind it (docs/training.md lists the columns):

- listwise (Aletheia's accuracy): the raw answers of the K responses (each box's content,
  `[[X]]` unwrapped, null where a response has none; read by the report's answer rule), the majority answer (`statistics.mode` over them) and
  whether top-1, maj@K and best-of-K (null at K = 1) are right;
- ranking (lists of 3+ with round-robin answers): the win counts, Kendall tau-b with its
  status (`defined`; `undefined`, which Aletheia scores -1; `no_valid_verdict`, left out of
  the mean; `not_ranked`: a list of 2, or no pair prompts asked), NDCG (null where the
  ideal DCG is 0), the pairwise counts and the transitive / judged triples.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.common.answers import AnswerRule, gold_letter, pair_answer, raw_answer
from pipeline.common.parquet import write_parquet
from pipeline.evaluate.protocol import (
    best_of_k_correct,
    list_ndcg,
    list_tau_b,
    majority_pick,
    pairwise_counts,
    transitivity_counts,
    verdict_from_pick,
    win_counts,
)
from pipeline.evaluate.responses import InstanceResponses

INSTANCES_FILE = "instances.parquet"

INSTANCE_RESULT_SCHEMA = pa.schema(
    [
        pa.field("split", pa.string(), nullable=False),
        pa.field("row", pa.int64(), nullable=False),  # the row number in the split
        pa.field("instance_id", pa.string(), nullable=False),
        pa.field("num_candidates", pa.int64(), nullable=False),
        pa.field("gold", pa.string(), nullable=False),
        pa.field("pass_rates", pa.list_(pa.float64()), nullable=False),
        # listwise: null where the instance got no listwise responses
        pa.field("k", pa.int64(), nullable=False),
        pa.field("answers", pa.list_(pa.string()), nullable=True),
        pa.field("majority_answer", pa.string(), nullable=True),
        pa.field("top1_correct", pa.bool_(), nullable=True),
        pa.field("majority_correct", pa.bool_(), nullable=True),
        pa.field("best_of_k_correct", pa.bool_(), nullable=True),
        # ranking from the round-robin pair prompts (lists of 3+)
        pa.field("pair_verdicts", pa.int64(), nullable=False),
        pa.field("pair_verdicts_invalid", pa.int64(), nullable=False),
        pa.field("wins", pa.list_(pa.int64()), nullable=True),
        pa.field("kendall_tau_b", pa.float64(), nullable=True),
        pa.field("kendall_tau_b_status", pa.string(), nullable=False),
        pa.field("ndcg", pa.float64(), nullable=True),
        pa.field("pairwise_correct", pa.int64(), nullable=True),
        pa.field("pairwise_counted", pa.int64(), nullable=True),
        pa.field("transitive_triples", pa.int64(), nullable=True),
        pa.field("triples_judged", pa.int64(), nullable=True),
        pa.field("transitivity", pa.float64(), nullable=True),
    ]
)


def _listwise(gold: str, texts: list[str], rule: AnswerRule) -> dict[str, Any]:
    if not texts:
        return dict.fromkeys(
            ("answers", "majority_answer", "top1_correct", "majority_correct", "best_of_k_correct")
        ) | {"k": 0}
    answers = [raw_answer(t, rule) for t in texts]
    majority = majority_pick(answers)
    return {
        "k": len(answers),
        "answers": answers,
        "majority_answer": majority,
        "top1_correct": answers[0] == gold,
        "majority_correct": majority == gold,
        "best_of_k_correct": best_of_k_correct(gold, answers),
    }


def _ranking(
    pass_rates: list[float], pairs: dict[tuple[int, int], str], rule: AnswerRule
) -> dict[str, Any]:
    empty = dict.fromkeys(
        (
            "wins",
            "kendall_tau_b",
            "ndcg",
            "pairwise_correct",
            "pairwise_counted",
            "transitive_triples",
            "triples_judged",
            "transitivity",
        )
    )
    if not pairs:
        return empty | {
            "pair_verdicts": 0,
            "pair_verdicts_invalid": 0,
            "kendall_tau_b_status": "not_ranked",
        }
    verdicts = [
        verdict_from_pick(i, j, pair_answer(t, rule)) for (i, j), t in sorted(pairs.items())
    ]
    base = {
        "pair_verdicts": len(verdicts),
        "pair_verdicts_invalid": sum(v.winner is None for v in verdicts),
    }
    correct, counted = pairwise_counts(pass_rates, verdicts)
    transitive, judged = transitivity_counts(len(pass_rates), verdicts)
    counts = {
        "pairwise_correct": correct,
        "pairwise_counted": counted,
        "transitive_triples": transitive,
        "triples_judged": judged,
        "transitivity": transitive / judged if judged else None,
    }
    if not any(v.winner is not None for v in verdicts):
        # Aletheia records no wins for such a list: it is left out of tau-b and NDCG
        return empty | base | counts | {"kendall_tau_b_status": "no_valid_verdict"}
    tau = list_tau_b(pass_rates, verdicts)
    return (
        base
        | counts
        | {
            "wins": win_counts(len(pass_rates), verdicts),
            "kendall_tau_b": tau,
            "kendall_tau_b_status": "undefined" if tau is None else "defined",
            "ndcg": list_ndcg(pass_rates, verdicts),
        }
    )


def instance_rows(
    split: str,
    instances: list[dict[str, Any]],
    grouped: dict[int, InstanceResponses],
    rule: AnswerRule = "after_think",
) -> list[dict[str, Any]]:
    """One result row per instance of `split` that has responses, in row order, its
    answers read by `rule`."""
    out = []
    for row in sorted(grouped):
        inst, got = instances[row], grouped[row]
        gold = gold_letter(inst["chosen_answer"])
        pass_rates = list(inst["pass_rates"])
        out.append(
            {
                "split": split,
                "row": row,
                "instance_id": inst["instance_id"],
                "num_candidates": inst["num_candidates"],
                "gold": gold,
                "pass_rates": pass_rates,
            }
            | _listwise(gold, got.listwise, rule)
            | _ranking(pass_rates, got.pairs, rule)
        )
    return out


def write_instance_table(rows: list[dict[str, Any]], out_dir: str | Path) -> Path:
    table = pa.Table.from_pylist(rows, schema=INSTANCE_RESULT_SCHEMA)
    return write_parquet(table, Path(out_dir) / INSTANCES_FILE, INSTANCE_RESULT_SCHEMA)
