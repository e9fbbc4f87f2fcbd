"""Sections of the dataset card that say what a reader needs beyond the counts: the data
fields, where the problems come from (licenses, attribution), what this particular build
really contains, its limitations, and how to cite. Kept apart from card.py's layout so
each section can be tested on its own."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa

from pipeline.publish import card_facts as F
from schemas.dataset_configs import CONFIG_BY_NAME


class SourceInfo(NamedTuple):
    name: str
    license: str | None  # SPDX-style id for the front matter; None = not known here
    attribution: str


# What the problem sources are published under (the problems, statements and tests; the
# candidates generated from them are this build's own). Unknown sources: the problem rows'
# own `license` field is what holds.
SOURCES: dict[str, SourceInfo] = {
    "bundled": SourceInfo(
        "Bundled problems", "apache-2.0", "written for aletheia-pipeline (data/bundled)"
    ),
    "code_contests": SourceInfo(
        "CodeContests", "cc-by-4.0", "DeepMind, `deepmind/code_contests` (Li et al., 2022)"
    ),
    "taco": SourceInfo("TACO", "apache-2.0", "BAAI, `BAAI/TACO` (Li et al., 2023)"),
    "apps": SourceInfo("APPS", "mit", "`codeparrot/apps` (Hendrycks et al., 2021)"),
    "codeforces": SourceInfo(
        "Codeforces", "cc-by-4.0", "`open-r1/codeforces` (problems from codeforces.com)"
    ),
    "livecodebench": SourceInfo(
        "LiveCodeBench", None, "`livecodebench/code_generation_lite`; see its dataset page"
    ),
    "humaneval": SourceInfo("HumanEval", "mit", "OpenAI, `openai_humaneval` (Chen et al., 2021)"),
}

# (field, type, meaning) for instance rows; DPO rows add the response fields below.
DATA_FIELDS: list[tuple[str, str, str]] = [
    ("prompt_id", "string", "the problem's id, shared by all its instances (as in Aletheia)"),
    ("query", "string", "the problem statement as shown to a verifier"),
    ("candidates", "list<string>", "the candidate programs, in the order shown (A, B, ...)"),
    ("num_candidates", "int64", "len(candidates)"),
    (
        "chosen_position",
        "int64",
        "0-based index of the one correct candidate in `candidates` (0 = A, 1 = B, ...)",
    ),
    (
        "chosen_answer",
        "string",
        (
            "the same position as a letter, A-E (A = chosen_position 0); [[A]]-[[E]] in a "
            "build published with `publish.answer_format: bracketed` (Aletheia's form)"
        ),
    ),
    ("pass_rates", "list<float>", "per candidate, the fraction of the problem's tests it passed"),
    (
        "verdicts",
        "list<string>",
        "per candidate, the sandbox verdict: AC, WA, TLE, MLE, RE, CE, OLE",
    ),
    (
        "generator",
        "string",
        (
            "who wrote the candidates: a policy model's name (sampled programs), "
            "`reference:<source>` (solutions shipped with the problem), `mutant:<operator>` "
            "(tree-sitter mutations of a correct reference), or `mixed` when the row's "
            "candidates come from more than one generator (each one's is in "
            "`candidate_generators`)"
        ),
    ),
    (
        "language",
        "string",
        "the candidates' language (python, cpp, java), or `mixed` when they are in several",
    ),
    ("easy_hard", "string", "difficulty band of the instance: easy or hard"),
    ("weak_strong", "string", "candidate tier: weak or strong generators"),
    ("source", "string", "the problem source (see Sources)"),
    (
        "modification",
        "string (nullable)",
        (
            "adv, mixed: the row's one bias type (its edits are all of this type); else null; "
            "Aletheia's label (e.g. `authority_bias_rejected`) in a build published with "
            "`publish.modification_labels: aletheia`"
        ),
    ),
    ("instance_id", "string", "names the row: hash of its problem, ordered candidates and split"),
    (
        "source_instance_id",
        "string (nullable)",
        "adv, mixed: the instance_id of the row the edits were applied to; else null",
    ),
    ("problem_id", "string", "stable problem id; never shared between train and test configs"),
    ("candidate_ids", "list<string>", "stable candidate ids"),
    (
        "candidate_origins",
        "list<string>",
        "per candidate: policy (sampled from a model), reference or mutant",
    ),
    ("candidate_generators", "list<string>", "per candidate: the generating model or origin"),
    ("candidate_languages", "list<string>", "per candidate: its language"),
    (
        "adversarial",
        "list<string> (items nullable)",
        "per candidate: the bias type applied to it (mixed, adv), else null",
    ),
    ("split", "string", "the stage the row came from: train, heldout, strong, hard, mixed, adv"),
    ("build_id", "string", "the build that produced the row"),
]
DPO_FIELDS: list[tuple[str, str, str]] = [
    (
        "prompt",
        "list<{role, content}>",
        (
            "the verifier prompt the responses answer, as chat messages (think: the user turn; "
            "instruct: the system and user turns), without the assistant pre-fill"
        ),
    ),
    ("prompt_variant", "string", "think (assistant turn pre-filled with <think>) or instruct"),
    (
        "chosen / rejected",
        "list<{role, content}>",
        (
            "one assistant message each: the whole turn, the think pre-fill `<think>` included; "
            "chosen ends in the correct \\boxed{letter}"
        ),
    ),
    (
        "chosen_source",
        "string",
        (
            "sampled (a correct verifier response), regenerated (a correct response of the "
            "regeneration round, which samples again the instances no verifier got right) or "
            "gold_spliced (a strong judge's trace with the gold answer spliced in)"
        ),
    ),
    (
        "rejected_answer",
        "string",
        "the letter the rejected response picked (bracketed as chosen_answer), or invalid",
    ),
    ("judge_model / rejected_judge_model", "string", "the verifier model that wrote each response"),
]


# Fields with a few distinct values: the card lists the ones this build's rows hold.
VALUE_FIELDS = frozenset(
    {
        "generator",
        "language",
        "easy_hard",
        "weak_strong",
        "source",
        "modification",
        "split",
        "candidate_origins",
        "candidate_languages",
        "verdicts",
        "adversarial",
        "chosen_source",
        "prompt_variant",
        "judge_model",
    }
)
MAX_VALUES = 24  # enough for every bias type; a long tail of model names is cut


def field_values(tables: dict[str, pa.Table], field: str) -> list[str | None]:
    """The distinct values of a field (list fields: of their items) over every config that
    has it, the most frequent first (rows of every config counted), ties by value."""
    counts: Counter[str | None] = Counter()
    for t in tables.values():
        if field not in t.column_names:
            continue
        for v in t.column(field).to_pylist():
            counts.update(v if isinstance(v, list) else [v])
    return [v for v, _ in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))]


def _values_cell(tables: dict[str, pa.Table], field: str) -> str:
    if field not in VALUE_FIELDS:
        return ""
    values = field_values(tables, field)
    shown = ", ".join("null" if v is None else f"`{v}`" for v in values[:MAX_VALUES])
    more = len(values) - MAX_VALUES
    return (shown + (f" and {more} more" if more > 0 else "")) or "-"


def data_fields_md(tables: dict[str, pa.Table]) -> str:
    """The field tables, with the values each categorical field takes in these rows."""

    def rows(fields: list[tuple[str, str, str]]) -> list[str]:
        return [
            f"| `{f}` | {t} | {m} | {_values_cell(tables, f.split(' / ')[0])} |"
            for f, t, m in fields
        ]

    head = ["| field | type | meaning | values in this build |", "| --- | --- | --- | --- |"]
    return "\n".join(
        [
            *head,
            *rows(DATA_FIELDS),
            "",
            "`dpo` and `mixed_dpo` rows carry the instance fields plus:",
            "",
            *head,
            *rows(DPO_FIELDS),
            "",
            "`train_questions` rows are problems with their tests (one per Train problem).",
        ]
    )


def source_names(tables: dict[str, pa.Table]) -> list[str]:
    names: set[str] = set()
    for t in tables.values():
        if "source" in t.column_names:
            names |= {s for s in t.column("source").to_pylist() if s}
    return sorted(names)


def derived_license(tables: dict[str, pa.Table]) -> str:
    """One license id when every source shares a known one; `other` otherwise."""
    licenses = {SOURCES[s].license if s in SOURCES else None for s in source_names(tables)}
    return licenses.pop() if len(licenses) == 1 and None not in licenses else "other"


def sources_md(tables: dict[str, pa.Table]) -> str:
    counts: Counter[str] = Counter()
    for name, t in tables.items():
        if CONFIG_BY_NAME[name].kind == "instances" and "source" in t.column_names:
            counts.update(t.column("source").to_pylist())
    lines = [
        "| source | license | attribution | rows (instance configs) |",
        "| --- | --- | --- | ---: |",
    ]
    for s in source_names(tables):
        info = SOURCES.get(s, SourceInfo(s, None, "your own source: see each problem's `license`"))
        lines.append(
            f"| {info.name} (`{s}`) | {info.license or 'see attribution'} | {info.attribution} "
            f"| {counts.get(s, 0)} |"
        )
    return "\n".join(lines)


def _test_caps(run_config: dict[str, Any]) -> dict[str, int]:
    """Evaluation split -> its test split's rows per (list size, language), from the run
    config as dumped (resolved values)."""
    specs = ((run_config.get("assemble") or {}).get("splits")) or []
    return {
        s["name"]: s["test_rows_per_stratum"]
        for s in specs
        if isinstance(s, dict) and s.get("test_rows_per_stratum")
    }


def splits_md(
    splits: dict[str, dict[str, pa.Table]],
    facts: list[F.SplitFacts],
    run_config: dict[str, Any],
) -> str:
    """What the evaluation configs hold and how their `test` and `full` splits relate."""
    evals = [n for n in splits if CONFIG_BY_NAME[n].side == "eval"]
    if not evals:
        return ""
    by = {(f.config, f.split): f for f in facts}
    caps = _test_caps(run_config)
    listwise = [by[(n, "full")] for n in evals if n != "adv"]
    repeated = sum(f.repeated_rate_rows for f in listwise)
    distinct = (
        "incorrect programs of distinct pass rates"
        if not repeated
        else f"incorrect programs (in {repeated} rows two of them share a pass rate)"
    )
    intro = (
        "Training configs have one split, `train`. Each evaluation config has two, as "
        "Aletheia's evaluation sets: `full` (every row) and `test` (a seeded sample of it, "
        "at most a fixed number of rows per list size and language; evaluate on `test` to "
        "compare with Aletheia's numbers). A row of `test` is the same row, with the same "
        "`instance_id`, in `full`. `heldout`, `strong` and `hard` are built as Aletheia's "
        "listwise evaluation sets (`src/listwise_eval_sets.py`): per group of candidates "
        "(Aletheia's: one problem, generator and language; `assemble.grouping` in the run "
        f"config), one correct program and {distinct}, in shuffled order."
    )
    head = "| config | `test` rows (cap per list size and language) | `full` rows | note |"
    lines = [intro, "", head, "| --- | ---: | ---: | --- |"]
    for name in evals:
        full, test = by[(name, "full")], by[(name, "test")]
        note = "a sample of `full`"
        if name == "adv":
            note = "`heldout`'s `test` split once per bias type"
        if F.same_rows(splits[name]["test"], splits[name]["full"]):
            note += "; `test` and `full` hold the same rows"
        cap = f" ({caps[name]})" if name in caps else ""
        lines.append(f"| `{name}` | {test.rows}{cap} | {full.rows} | {note} |")
    return "\n".join(lines)


def _tiny_verifier(run_config: dict[str, Any]) -> bool:
    """Whether the DPO responses come from the locally built random tiny model."""
    tiny = (run_config.get("tiny_model") or {}).get("dir")
    if not tiny:
        return False
    judges = (run_config.get("dpo") or {}).get("judges") or []
    return any(
        Path(str(j.get("model") or j.get("model_path") or "")).resolve()
        == Path(str(tiny)).resolve()
        for j in judges
    )


def contents_md(facts: list[F.SplitFacts], run_config: dict[str, Any]) -> str:
    """What this build really contains, said plainly (a demo build is not a real dataset)."""
    main = [f for f in facts if f.kind == "instances" and f.split in ("train", "full")]
    total = sum(f.candidates for f in main)
    policy = [(f.config, f.origins.get("policy", 0), f.candidates) for f in main if f.candidates]
    out = []
    if any(n for _, n, _ in policy):
        parts = ", ".join(f"`{c}` {n} of {t} ({F.share(n, t)})" for c, n, t in policy)
        out.append(
            "Model-written candidates (policy samples) per instance config (`train` / `full` "
            f"split): {parts}. The others are the problems' reference solutions and "
            "tree-sitter mutants of correct ones: see *Candidates by origin* below."
        )
    if total and not any(n for _, n, _ in policy):
        out.append(
            "**No candidate in this build was sampled from a model**: they are the problems' "
            "reference solutions (correct and incorrect) and mechanical mutants of the correct "
            "ones. Such a build exercises the pipeline; it is not the distribution of model "
            "outputs a verifier meets in use."
        )
    if _tiny_verifier(run_config):
        constrained = bool((run_config.get("dpo") or {}).get("constrain_answer"))
        how = (
            " Their answer format was constrained (`dpo.constrain_answer`) so that every "
            "response ends in a valid `\\boxed{X}`; the letter is the model's own pick."
            if constrained
            else ""
        )
        out.append(
            "**The verifier responses in `dpo` and `mixed_dpo` come from a tiny, randomly "
            "initialised model built locally**: they are real generations but random text, "
            "useful only to test training code, not to train a verifier." + how
        )
    return "\n\n".join(out)


LIMITATIONS = """\
- Correctness means passing the problem's tests in the sandbox: a candidate that passes
  every test can still be wrong on inputs the tests miss, and a test set with few or weak
  tests lets such candidates through as "correct".
- Verdicts depend on the sandbox's time and memory limits and its compilers (C++17 with
  `-O2`, the Java and Python versions of the image); a solution near a limit may get
  another verdict elsewhere.
- Train and test are separated by problem and by near-duplicate clusters of statements
  (MinHash), which does not catch every paraphrase; contamination of the candidate models'
  own training data with these problems is not checked.
- Bias edits (`mixed`, `adv`) are rule-based and English-only.
- Candidate languages are Python, C++ and Java only."""

CITATION = """\
The Aletheia dataset family and training recipes were introduced in:

```bibtex
@article{aletheia2025,
  title   = {Aletheia: What Makes RLVR For Code Verifiers Tick?},
  author  = {Venkatkrishna, Vatsal and Paul, Indraneil and Gurevych, Iryna},
  journal = {arXiv preprint},
  year    = {2025}
}
```

This build was regenerated with aletheia-pipeline; cite its build id (above) with the
sources listed under Sources, under their licenses."""
