"""The dataset card (`README.md`): YAML front matter the Hub and `datasets` read, then prose.

The front matter declares every config with its `data_files`, one entry per split (`train`;
or `test` and `full` for an evaluation set), so
`datasets.load_dataset(<folder or repo>, <config>, split=...)` reads each one. The body
says what each config is, how it was built (run config, seeds, models, sandbox image,
pipeline version), the counts per split and per list size, the invariant checks and the
plots. It contains
no timestamps (an unchanged build gives a byte-identical card) and no secrets.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import yaml

from pipeline.common.answers import gold_letter
from pipeline.publish import card_sections as sections
from pipeline.publish.checks import CheckResult
from pipeline.publish.layout import (
    CONFIG_BY_NAME,
    CONFIGS,
    BuildManifest,
    DatasetConfig,
    split_glob,
)

Splits = dict[str, dict[str, pa.Table]]  # config -> split -> rows (layout.split_tables)

# Keys that hold a credential (hf_token, api_key, password, ...), not ones that merely
# mention tokens (max_tokens, api_key_env: the name of a variable).
_SECRET_KEY = re.compile(
    r"^(.*[_-])?(token|secret|password|passwd|api[_-]?key|authorization)$", re.IGNORECASE
)


def redact(obj: Any) -> Any:
    """Drop the value of any key that looks like a credential, at any depth."""
    if isinstance(obj, dict):
        return {
            k: ("<redacted>" if _SECRET_KEY.search(str(k)) and v else redact(v))
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [redact(v) for v in obj]
    return obj


def main_tables(splits: Splits) -> dict[str, pa.Table]:
    """One table per config: its `train` split, or an evaluation set's `full` split."""
    return {name: by_split.get("full", by_split.get("train")) for name, by_split in splits.items()}


def front_matter(splits: Splits, pretty_name: str, license: str) -> dict[str, Any]:
    configs = []
    for cfg in CONFIGS:
        if cfg.name not in splits:
            continue
        entry: dict[str, Any] = {
            "config_name": cfg.name,
            "data_files": [{"split": s, "path": split_glob(cfg.name, s)} for s in cfg.splits],
        }
        if cfg.name == "train":
            entry["default"] = True
        configs.append(entry)
    n = sum(t.num_rows for t in main_tables(splits).values())
    size = (
        "n<1K"
        if n < 1_000
        else "1K<n<10K"
        if n < 10_000
        else "10K<n<100K"
        if n < 100_000
        else "100K<n<1M"
    )
    return {
        "pretty_name": pretty_name,
        "license": license,
        "language": ["en", "code"],
        "task_categories": ["text-generation"],
        "tags": ["code", "verifier", "execution-verified", "dpo", "aletheia"],
        "size_categories": [size],
        "configs": configs,
    }


def models_used(tables: dict[str, pa.Table]) -> dict[str, list[str]]:
    gens: Counter[str] = Counter()
    judges: set[str] = set()
    for name, t in tables.items():
        kind = CONFIG_BY_NAME[name].kind
        if kind == "questions":
            continue
        for row in t.column("candidate_generators").to_pylist():
            gens.update(row)
        if kind == "dpo":
            judges |= set(t.column("judge_model").to_pylist())
            judges |= set(t.column("rejected_judge_model").to_pylist())
    return {"candidate generators": sorted(gens), "verifier-response models (DPO)": sorted(judges)}


def _each_split(splits: Splits) -> Iterator[tuple[DatasetConfig, str, pa.Table]]:
    for cfg in CONFIGS:
        for split, t in splits.get(cfg.name, {}).items():
            yield cfg, split, t


def counts_table(splits: Splits) -> str:
    lines = [
        "| config | split | rows | problems | candidates / row | languages | correct position (A..E) |",
        "| --- | --- | ---: | ---: | ---: | --- | --- |",
    ]
    for cfg, split, t in _each_split(splits):
        problems = len(set(t.column("problem_id").to_pylist()))
        if cfg.kind == "questions":
            lines.append(f"| {cfg.name} | {split} | {t.num_rows} | {problems} | - | - | - |")
            continue
        sizes = t.column("num_candidates").to_pylist()
        mean = f"{sum(sizes) / len(sizes):.2f}" if sizes else "-"
        langs = Counter(l for row in t.column("candidate_languages").to_pylist() for l in row)
        lang_s = ", ".join(f"{k} {v}" for k, v in sorted(langs.items())) or "-"
        pos = Counter(gold_letter(a) for a in t.column("chosen_answer").to_pylist())
        pos_s = " / ".join(str(pos.get(a, 0)) for a in "ABCDE")
        lines.append(
            f"| {cfg.name} | {split} | {t.num_rows} | {problems} | {mean} | {lang_s} | {pos_s} |"
        )
    return "\n".join(lines)


def dpo_routes_md(tables: dict[str, pa.Table]) -> str:
    """Where each DPO config's chosen responses came from ('' without a DPO config)."""
    routes = ("sampled", "regenerated", "gold_spliced")
    lines = []
    for cfg in CONFIGS:
        t = tables.get(cfg.name)
        if t is None or cfg.kind != "dpo":
            continue
        c = Counter(t.column("chosen_source").to_pylist())
        cells = [cfg.name, str(t.num_rows), *(str(c.get(r, 0)) for r in routes)]
        lines.append("| " + " | ".join(cells) + " |")
    if not lines:
        return ""
    return "\n".join(
        [
            (
                "Chosen responses of the DPO configs by route (`chosen_source`): a correct "
                "response of the first sampling round, a correct one of the regeneration "
                "round (the instances no verifier model got right, or all got right, sampled "
                "once more), or a strong verifier's trace with the gold answer spliced in."
            ),
            "",
            "| config | rows | sampled | regenerated | gold_spliced |",
            "| --- | ---: | ---: | ---: | ---: |",
            *lines,
        ]
    )


def list_sizes_table(splits: Splits) -> str:
    """Rows per list size (2..5 candidates) of every split of every instance config."""
    sizes = range(2, 6)
    lines = [
        "| config | split | " + " | ".join(f"{n} candidates" for n in sizes) + " |",
        "| --- | --- |" + " ---: |" * len(sizes),
    ]
    for cfg, split, t in _each_split(splits):
        if cfg.kind == "questions":
            continue
        got = Counter(t.column("num_candidates").to_pylist())
        cells = " | ".join(str(got.get(n, 0)) for n in sizes)
        lines.append(f"| {cfg.name} | {split} | {cells} |")
    return "\n".join(lines)


VERDICT_COLUMNS = ("AC", "WA", "TLE", "MLE", "RE", "CE", "OLE")


def verdict_mix(tables: dict[str, pa.Table]) -> list[dict[str, Any]]:
    """Candidates per config / generator / origin / tier, with their counts per verdict.

    Read from the published rows themselves, so it says what a user of each config gets
    (e.g. how many model-written candidates reached Train and Strong, and how many of them
    are correct)."""
    counts: Counter[tuple[str, str, str, str, str]] = Counter()
    for cfg in CONFIGS:
        t = tables.get(cfg.name)
        if t is None or cfg.kind == "questions":
            continue
        cols = [
            t.column(c).to_pylist()
            for c in ("candidate_generators", "candidate_origins", "weak_strong", "verdicts")
        ]
        for gens, origins, tier, verdicts in zip(*cols):
            for g, o, v in zip(gens, origins, verdicts):
                counts[(cfg.name, g, o, tier, v)] += 1
    rows: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    order = {c.name: i for i, c in enumerate(CONFIGS)}
    for (config, gen, origin, tier, verdict), n in counts.items():
        row = rows.setdefault(
            (config, gen, origin, tier),
            {"config": config, "generator": gen, "origin": origin, "tier": tier, "total": 0}
            | {v: 0 for v in VERDICT_COLUMNS},
        )
        row[verdict] = row.get(verdict, 0) + n
        row["total"] += n
    return sorted(
        rows.values(), key=lambda r: (order[r["config"]], r["origin"], r["generator"], r["tier"])
    )


def verdict_mix_table(tables: dict[str, pa.Table]) -> str:
    head = "| config | generator | origin | tier | candidates | " + " | ".join(VERDICT_COLUMNS)
    lines = [head + " |", "| --- | --- | --- | --- | ---: |" + " ---: |" * len(VERDICT_COLUMNS)]
    for r in verdict_mix(tables):
        cells = [r["config"], f"`{r['generator']}`", r["origin"], r["tier"], str(r["total"])]
        cells += [str(r.get(v, 0)) for v in VERDICT_COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def policy_note(run_config: dict[str, Any]) -> str:
    """Say plainly when the policy models are tiny local fits, not real code models."""
    fits = run_config.get("policies") or []
    if not fits:
        return ""
    names = ", ".join(f"`{f['name']}`" for f in fits)
    return (
        f"**The policy models of this build ({names}) are tiny and local.** Each is a small "
        "causal LM with a line-level tokenizer, fitted on the CPU in seconds by "
        "`pipeline/models/policy.py` on the reference solutions of this build's own problems "
        "(Train and test problems alike), so its programs are mostly recalled or spliced "
        "reference lines, not reasoning. They exist so the pipeline's policy pools run end to "
        "end offline; the real-scale configs name real policy models.\n"
    )


def checks_table(results: list[CheckResult]) -> str:
    lines = ["| check | invariant | rows checked | result |", "| --- | --- | ---: | --- |"]
    for r in results:
        status = "pass" if r.passed else f"FAIL ({len(r.violations)} rows)"
        lines.append(f"| {r.name} | {r.invariant} | {r.checked_rows} | {status} |")
    return "\n".join(lines)


def render_card(
    splits: Splits,
    manifest: BuildManifest,
    results: list[CheckResult],
    plots: dict[str, str],
    *,
    pretty_name: str = "Aletheia (regenerated)",
    license: str | None = None,
) -> str:
    tables = main_tables(splits)
    license = license or sections.derived_license(tables)  # None: from the sources' licenses
    meta = yaml.safe_dump(
        front_matter(splits, pretty_name, license), sort_keys=False, allow_unicode=True
    )
    configs_md = "\n".join(
        f"| `{c.name}` | {', '.join(f'`{s}`' for s in c.splits)} | {c.description} |"
        for c in CONFIGS
        if c.name in tables
    )
    models = models_used(tables)
    models_md = "\n".join(
        f"- {k}: " + (", ".join(f"`{m}`" for m in v) if v else "none") for k, v in models.items()
    )
    seeds_md = ", ".join(f"`{k}={v}`" for k, v in sorted(manifest.seeds.items())) or "none recorded"
    config_yaml = yaml.safe_dump(
        redact(manifest.run_config), sort_keys=True, allow_unicode=True
    ).strip()
    plots_md = "\n\n".join(f"![{cap}](assets/{f})" for f, cap in plots.items())
    example = next(iter(c.name for c in CONFIGS if c.name in tables), "train")
    return f"""---
{meta}---

# {pretty_name}

Execution-grounded data for training and evaluating **code verifiers**: models that read
a programming problem and 2-5 candidate programs and pick the one that is correct.
Every candidate was compiled and run against the problem's tests in a locked-down Docker
sandbox; an instance has exactly one candidate that passed every test.

Rows lead with Aletheia's field names and types (`prompt_id, query, generator, language,
num_candidates, candidates, chosen_position, chosen_answer, pass_rates, easy_hard,
weak_strong, source, modification`; `prompt_id` is the problem's id, shared by its
instances), with provenance columns beside them (`instance_id, problem_id, candidate_ids,
candidate_origins, candidate_generators, candidate_languages, verdicts, adversarial,
split, build_id`).

```python
from datasets import load_dataset
ds = load_dataset("<this repo or folder>", "{example}")
heldout = load_dataset("<this repo or folder>", "heldout", split="test")  # or split="full"
```

## Configs

| config | splits | what a row is |
| --- | --- | --- |
{configs_md}

{sections.splits_md(splits, manifest.run_config)}

## Data fields

{sections.data_fields_md()}

## Counts

{counts_table(splits)}

Rows per list size:

{list_sizes_table(splits)}

{dpo_routes_md(tables)}

## What this build contains

{sections.contents_md(tables, manifest.run_config)}

## Sources

Problems, statements and tests come from these sources, under their licenses; the
candidates, verdicts and responses are this build's own. Front-matter license: `{license}`.

{sections.sources_md(tables)}

## How it was built

- build id: `{manifest.build_id}`
- pipeline version: `{manifest.pipeline_version}`
- sandbox image: `{manifest.sandbox_image or "unknown"}`
- seeds: {seeds_md}
{models_md}

<details>
<summary>Run config (credentials redacted)</summary>

```yaml
{config_yaml}
```

</details>

## Candidates by model and verdict

Every candidate of every instance config, by who wrote it (`origin`: `policy` for a
model's sample, `reference` for a solution shipped with the problem, `mutant` for a
tree-sitter mutation of a correct one) and its sandbox verdict.

{policy_note(manifest.run_config)}
{verdict_mix_table(tables)}

## Invariant checks

Re-checked on exactly these rows before publishing; a failed check stops the release.

{checks_table(results)}

## Plots

{plots_md}

## Limitations

{sections.LIMITATIONS}

## Citation

{sections.CITATION}
"""
