"""The evaluation report: a JSON document and a markdown rendering of it.

Aletheia's protocol comes first (the numbers comparable with the paper); our vote-share
metrics follow in their own, labelled section; then the self-consistency curves (maj@k and
best-of-k for every k = 1, 2, ..., K; a PNG per split beside the report,
`sc_curve_<split>.png`). The report names the rule its answers were read by
(`answer_rule`). Under each split's row come its baselines
(baselines.py): a random verifier's expected scores, `always A`, and the best fixed letter.
A split whose answers are mostly invalid gets a warning line at the top of the report and of
each section, and every ranking metric sits beside the number of lists, pair answers or
instances it rests on.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pipeline.common.verifier_prompt import wording_line
from pipeline.evaluate.provenance import describe

ALETHEIA_COLUMNS = [
    ("instances", "n"),
    ("k", "K"),
    ("top1_accuracy", "top-1"),
    ("majority_accuracy", "maj@K"),
    ("best_of_k_accuracy", "best-of-K"),
    ("invalid_rate", "invalid"),
    ("lists", "lists 3+"),
    ("lists_scored", "lists scored"),
    ("kendall_tau_b", "tau-b"),
    ("kendall_tau_b_undefined", "tau-b undefined"),
    ("ndcg", "NDCG"),
    ("pairwise_accuracy", "pairwise"),
    ("pairwise_counted", "pair answers counted"),
    ("transitivity", "transitive"),
]
VOTE_SHARE_COLUMNS = [
    ("instances", "n"),
    ("k", "K"),
    ("top1_accuracy", "mean acc"),
    ("self_consistency_accuracy", "maj@K (valid)"),
    ("best_of_n_accuracy", "best-of-K"),
    ("invalid_rate", "invalid"),
    ("pairwise_accuracy", "pairwise"),
    ("pairwise_pairs", "pairs"),
    ("kendall_tau_b", "tau-b (defined)"),
    ("kendall_tau_b_instances", "tau-b n"),
    ("ndcg", "NDCG (linear)"),
    ("ndcg_instances", "NDCG n"),
]


CONSTRAINED_NOTE = (
    "> **Constrained answers** (`constrain_answer: true`, ours, not Aletheia's protocol): every "
    "response was decoded as free text followed by `\\boxed{X}`, with X a valid letter the "
    "model picked itself, so every generated answer parses (only a failed generation, such as "
    "a prompt past the model's context, counts invalid). This measures which "
    "letter a model prefers, not whether it can write the format; a model that has not "
    "learnt the task (the demo's tiny random verifier) scores near the random verifier's "
    "expected values shown under each split."
)


# What each answer rule (EvalConfig.answer_rule, pipeline/common/answers.py) reads.
ANSWER_RULE_TEXT = {
    "after_think": (
        "the first \\boxed{} after the last </think>, `X` or `[[X]]` exactly (Aletheia's "
        "training reward, src/rewards.py: a box inside the thinking is no answer)"
    ),
    "first_box": (
        "the first \\boxed{} anywhere in the completion, `[[..]]` unwrapped (Aletheia's "
        "evaluation scripts, src/evaluate_ckpt.py and src/evaluate.py)"
    ),
}


def answer_rule_record(rule: str) -> dict[str, str]:
    """The report's record of how its answers were read."""
    return {"rule": rule, "reads": ANSWER_RULE_TEXT[rule]}


def answer_rule_line(report: dict[str, Any]) -> str:
    """One line naming the report's answer rule (`after_think` for reports written before
    the rule was recorded: the only rule there was)."""
    rule = (report.get("answer_rule") or {}).get("rule", "after_think")
    return f"Answers read by the `{rule}` rule: {ANSWER_RULE_TEXT[rule]}."


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return "-" if math.isnan(v) else f"{round(v, 9) + 0.0:.3f}"  # no "-0.000"
    if isinstance(v, list):
        return "/".join(str(x) for x in v)
    return str(v)


def _baseline_rows(m: dict[str, Any], section: str) -> list[tuple[str, dict[str, Any]]]:
    """(label, metrics) of the baselines shown under a split's row."""
    b = m.get("baselines") or {}
    rows = []
    if b.get("random"):
        rows.append(("random verifier (expected)", b["random"][section]))
    a, best = b.get("always_a"), b.get("best_letter")
    if a:
        rows.append(
            ("always A" + (" (best letter)" if best and best["letter"] == "A" else ""), a[section])
        )
    if best and best["letter"] != "A":
        rows.append((f"always {best['letter']} (best letter)", best[section]))
    return rows


def _table(splits: dict[str, Any], section: str, columns: list[tuple[str, str]]) -> list[str]:
    lines = ["| split | " + " | ".join(h for _, h in columns) + " |"]
    lines += ["| --- | " + " | ".join("---:" for _ in columns) + " |"]
    for split, m in splits.items():
        lines += [f"| {split} | " + " | ".join(_fmt(m[section].get(k)) for k, _ in columns) + " |"]
        for label, base in _baseline_rows(m, section):
            lines += [f"| ↳ {label} | " + " | ".join(_fmt(base.get(k)) for k, _ in columns) + " |"]
    return lines


def _warnings(splits: dict[str, Any], *, short: bool = False) -> list[str]:
    """Warning lines for the flagged splits: in full at the top of the report, one short line
    per split at the top of each section."""
    flagged = {split: m["flags"] for split, m in splits.items() if m.get("flags")}
    if short:
        lines = [
            f"> **Warning** ({split}): mostly invalid answers (see the top); read its numbers "
            "beside the baselines and the counts they rest on."
            for split in flagged
        ]
    else:
        lines = [
            f"> **Warning** ({split}): {flag}" for split, flags in flagged.items() for flag in flags
        ]
    return [*lines, ""] if lines else []


def _sc_curves(splits: dict[str, Any], plots: dict[str, str]) -> list[str]:
    """The self-consistency curves: a table per split (beside the random verifier's expected
    values) and its plot."""
    lines = ["", "## Self-consistency curves", ""]
    lines += [
        (
            "maj@k and best-of-k over each instance's first k responses (Aletheia's protocol, "
            "raw answers as votes); best-of-1 is undefined (-). n: the instances with k or "
            "more responses."
        ),
    ]
    for split, m in splits.items():
        curve = m["aletheia"].get("sc_curve") or []
        if not curve:
            continue
        random = {
            p["k"]: p
            for p in (((m.get("baselines") or {}).get("random") or {}).get("aletheia") or {}).get(
                "sc_curve", []
            )
        }
        lines += [
            "",
            f"### {split}",
            "",
            "| k | n | maj@k | best-of-k | random maj@k | random best-of-k |",
            "| ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for p in curve:
            r = random.get(p["k"], {})
            lines += [
                f"| {p['k']} | {p['instances']} | "
                + " | ".join(
                    _fmt(v) or "-"
                    for v in (
                        p["majority_accuracy"],
                        p["best_of_k_accuracy"],
                        r.get("majority_accuracy"),
                        r.get("best_of_k_accuracy"),
                    )
                )
                + " |"
            ]
        if split in plots:
            lines += ["", f"![self-consistency curve, {split}]({plots[split]})"]
    return lines


def to_markdown(report: dict[str, Any]) -> str:
    cfg = report["config"]
    who = report.get("model") or report.get("responses")
    splits = report["splits"]
    lines = [f"# Verifier evaluation: `{who}`", ""]
    if report.get("responses"):
        gen = report.get("generated_with") or {}
        lines += [
            (
                f"Scored from the responses file `{report['responses']}` (no model loaded); "
                f"generated with: {describe(gen)} (from the file's `.generation.json`)."
            ),
            "",
        ]
        if gen.get("constrain_answer") is True:
            lines += [CONSTRAINED_NOTE, ""]
    else:
        lines += [
            f"K = {cfg['k']} listwise responses per instance, prompt style `{cfg['style']}`.",
            "",
        ]
        if cfg.get("constrain_answer"):
            lines += [CONSTRAINED_NOTE, ""]
    lines += [answer_rule_line(report), ""]
    if isinstance(report.get("prompt"), dict):  # the wording the prompts used
        lines += [wording_line(report["prompt"]), ""]
    lines += _warnings(splits)
    lines += [f"> **Note**: {w}" for w in report.get("warnings", [])]
    lines += [""] if report.get("warnings") else []
    lines += ["## Aletheia protocol", ""]
    lines += _warnings(splits, short=True)
    lines += _table(splits, "aletheia", ALETHEIA_COLUMNS)
    lines += [
        "",
        (
            "top-1: the first response; maj@K: the most common raw answer (box content) over "
            "K responses, each distinct invalid answer its own vote, ties to the first met; "
            "best-of-K: some response right (undefined at K = 1); ranking (lists of 3+): each "
            "pair of candidates asked as a 2-candidate prompt, candidates ranked by wins; tau-b "
            "per list over the lists scored (those with a valid pair answer), a list whose "
            "tau-b is undefined (all win counts or all pass rates equal) scored -1 and counted "
            "in `tau-b undefined` (a defined -1, a reversed ranking, is not); NDCG with gain "
            "2^pass_rate - 1; pairwise: share of the valid pair answers that prefer the higher "
            "pass rate (how many: pair answers counted). Under each split: a verifier answering uniformly at "
            "random (expected values, exact), one always answering A, and the best fixed letter."
        ),
        "",
        "## Vote-share metrics (ours, not comparable with the paper)",
        "",
    ]
    lines += _warnings(splits, short=True)
    lines += _table(splits, "vote_share", VOTE_SHARE_COLUMNS)
    lines += [
        "",
        (
            "Ranking by the share of the K listwise responses that pick each candidate; "
            "maj@K over valid answers only; tau-b averaged over instances where it is defined; "
            "NDCG with linear gain; the ranking metrics leave out instances with no valid "
            "response (pairs, tau-b n, NDCG n: what they rest on)."
        ),
    ]
    lines += _sc_curves(splits, report.get("sc_plots") or {})
    letters = sorted(
        {g for m in splits.values() for g in m["vote_share"]["accuracy_by_gold_position"]}
    )
    lines += ["", "## Mean accuracy by gold position", ""]
    lines += [
        "| split | " + " | ".join(letters) + " |",
        "| --- | " + " | ".join("---:" for _ in letters) + " |",
    ]
    for split, m in splits.items():
        by = m["vote_share"]["accuracy_by_gold_position"]
        lines += [
            f"| {split} | " + " | ".join(_fmt(by[g]) if g in by else "-" for g in letters) + " |"
        ]
    if report.get("flip"):
        lines += ["", "## Adv vs Heldout: decision flips per bias type", ""]
        lines += [
            "| bias type | pairs | valid pairs | flip rate | correct -> wrong |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for bias, f in report["flip"].items():
            if bias == "unpaired":
                continue
            lines += [
                (
                    f"| {bias} | {int(f['n'])} | {int(f.get('valid', f['n']))} | "
                    f"{_fmt(f['flip_rate'])} | {_fmt(f['correct_to_wrong'])} |"
                )
            ]
        lines += [
            "",
            (
                "Rates over the valid pairs: both majority decisions a letter; "
                "with no valid pair a rate is undefined (-), not 0."
            ),
        ]
        if "unpaired" in report["flip"]:
            lines += [
                "",
                f"{int(report['flip']['unpaired']['n'])} Adv rows had no unambiguous Heldout partner.",
            ]
    return "\n".join(lines) + "\n"


HEADLINE = (("kendall_tau_b", "tau-b"), ("ndcg", "NDCG"), ("transitivity", "transit."))
# `aletheia evaluate`'s printed table.
SUMMARY = (
    ("top1_accuracy", "top-1"),
    ("invalid_rate", "invalid"),
    ("kendall_tau_b", "tau-b"),
    ("ndcg", "NDCG"),
)


def headline(report: dict[str, Any]) -> str:
    """A short plain-text table of the ranking metrics (Aletheia's protocol) per split, each
    beside the random verifier's expected value: what `make demo` prints at the end. Reads
    a report.json as written (NaN as null: shown `-`)."""
    return "\n".join(_metric_table(report, HEADLINE))


def summary(report: dict[str, Any]) -> str:
    """What `aletheia evaluate` prints (the whole report is in report.md): what was scored
    and with which generation settings, a line per split (each metric beside a random
    verifier's expected value), the flags, and where the report is."""
    gen = report.get("generated_with") or {}
    if report.get("responses"):
        first = f"scored {report['responses']} (no model loaded; generated with: {describe(gen)})"
    else:
        first = f"evaluated {describe(gen)}"
    lines = [first, "", *_metric_table(report, SUMMARY), ""]
    lines += [f"flagged: {flag}" for flag in report.get("flags", [])]
    files = report.get("files") or {}
    lines += [f"report: {files.get('markdown')}  (JSON: {files.get('json')})"]
    return "\n".join(lines)


def _metric_table(report: dict[str, Any], columns: tuple[tuple[str, str], ...]) -> list[str]:
    def cell(v: Any) -> str:
        if isinstance(v, bool) or v is None or (isinstance(v, float) and math.isnan(v)):
            return "-"
        return f"{v:.3f}" if isinstance(v, float) else str(v)

    names = [f"{name} (random)" for _, name in columns]
    lines = [f"{'config':8s} {'rows':>5s}  " + "  ".join(f"{n:>17s}" for n in names)]
    for split, m in report["splits"].items():
        ours = m["aletheia"]
        rand = (((m.get("baselines") or {}).get("random") or {}).get("aletheia")) or {}
        pairs = [f"{cell(ours.get(k))} ({cell(rand.get(k))})" for k, _ in columns]
        lines.append(
            f"{split:8s} {cell(ours.get('instances')):>5s}  "
            + "  ".join(f"{p:>17s}" for p in pairs)
        )
    return lines


def _clean(obj: Any) -> Any:
    """NaN is not JSON: write null."""
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    return obj


def write_report(report: dict[str, Any], out_dir: str | Path) -> tuple[Path, Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    from pipeline.evaluate.plots import write_sc_plots  # matplotlib: only when writing

    report["sc_plots"] = write_sc_plots(report, out)
    js, md = out / "report.json", out / "report.md"
    js.write_text(json.dumps(_clean(report), indent=2))
    md.write_text(to_markdown(report))
    return js, md
