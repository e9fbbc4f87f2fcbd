"""The card's per-model verdict mix, counted by hand on two small configs."""

from __future__ import annotations

import pyarrow as pa

from pipeline.publish.card import policy_note, verdict_mix, verdict_mix_table


def _config(rows: list[tuple[list[str], list[str], str, list[str]]]) -> pa.Table:
    gens, origins, tiers, verdicts = zip(*rows)
    return pa.table(
        {
            "candidate_generators": list(gens),
            "candidate_origins": list(origins),
            "weak_strong": list(tiers),
            "verdicts": list(verdicts),
        }
    )


def test_verdict_mix_counts_each_candidate_once_per_config() -> None:
    tables = {
        "strong": _config([(["pol-s", "ref"], ["policy", "reference"], "strong", ["AC", "WA"])]),
        "train": _config(
            [
                (["pol-w", "pol-w", "ref"], ["policy", "policy", "reference"], "weak", ["AC", "CE", "WA"]),
                (["pol-w", "mut"], ["policy", "mutant"], "weak", ["WA", "AC"]),
            ]
        ),
    }  # fmt: skip
    got = {(r["config"], r["generator"]): r for r in verdict_mix(tables)}
    # train: pol-w wrote AC, CE (row 1) and WA (row 2)
    assert got[("train", "pol-w")] | {} == {
        "config": "train", "generator": "pol-w", "origin": "policy", "tier": "weak", "total": 3,
        "AC": 1, "WA": 1, "TLE": 0, "MLE": 0, "RE": 0, "CE": 1, "OLE": 0,
    }  # fmt: skip
    assert got[("train", "ref")]["WA"] == 1 and got[("train", "mut")]["AC"] == 1
    assert got[("strong", "pol-s")]["AC"] == 1 and got[("strong", "pol-s")]["tier"] == "strong"
    assert next(r["config"] for r in verdict_mix(tables)) == "train"  # the card's config order
    table = verdict_mix_table(tables)
    assert "| train | `pol-w` | policy | weak | 3 | 1 | 1 | 0 | 0 | 0 | 1 | 0 |" in table


def test_policy_note_only_when_the_build_fitted_policies() -> None:
    assert policy_note({"policies": []}) == ""
    note = policy_note({"policies": [{"name": "demo-policy-weak"}]})
    assert "`demo-policy-weak`" in note and "tiny and local" in note
