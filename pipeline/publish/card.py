"""The dataset card (`README.md`): YAML front matter the Hub and `datasets` read, then prose.

The front matter declares every config with its `data_files`, one entry per split (`train`;
or `test` and `full` for an evaluation set), so
`datasets.load_dataset(<folder or repo>, <config>, split=...)` reads each one. The body is
what a Hub visitor reads: what each config is and holds, how to train on the DPO configs
with TRL, the fields, an example row per config, the counts per split, how it was built,
the invariant checks and the plots. Its long parts are files of the release beside it
(`release_files`): the whole run config, each config's first row whole, and the candidate
tables by origin and by model and verdict. It contains no timestamps (an unchanged build
gives a byte-identical card) and no secrets.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml

from pipeline.common.hub_folder import split_glob
from pipeline.publish import card_example
from pipeline.publish import card_facts as F
from pipeline.publish import card_sections as sections
from pipeline.publish.card_cues import dpo_cues_md
from pipeline.publish.card_example import example_yaml
from pipeline.publish.card_positions import position_mix_md
from pipeline.publish.checks import CheckResult
from pipeline.publish.layout import BuildManifest
from schemas.dataset_configs import CONFIG_BY_NAME, CONFIGS

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


def front_matter(
    splits: Splits, pretty_name: str, license: str, info: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The YAML header: the Hub's metadata, `dataset_info` (features and counts per config
    and split, `card_info.dataset_info`) and `configs` (each split's shards)."""
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
        **({"dataset_info": info} if info else {}),
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


def counts_table(facts: list[F.SplitFacts]) -> str:
    """Rows, problems, rows per list size, rows per language (the row's `language`, not its
    candidates') and the correct position, per split."""
    sizes = range(2, 6)
    lines = [
        "| config | split | rows | problems | "
        + " | ".join(f"{n} cand." for n in sizes)
        + " | languages (rows) | correct position (A / B / C / D / E) |",
        "| --- | --- | ---: | ---: |" + " ---: |" * len(sizes) + " --- | --- |",
    ]
    for f in facts:
        if f.kind == "questions":
            dash = " | ".join("-" for _ in sizes)
            lines.append(f"| {f.config} | {f.split} | {f.rows} | {f.problems} | {dash} | - | - |")
            continue
        cells = " | ".join(str(f.sizes.get(n, 0)) for n in sizes)
        langs = ", ".join(f"{k} {v}" for k, v in sorted(f.languages.items())) or "-"
        pos = " / ".join(str(f.positions.get(a, 0)) for a in "ABCDE")
        lines.append(
            f"| {f.config} | {f.split} | {f.rows} | {f.problems} | {cells} | {langs} | {pos} |"
        )
    return "\n".join(lines)


def origins_table(facts: list[F.SplitFacts]) -> str:
    """Candidates per origin, rows that mix origins, rows whose `generator` is `mixed`."""
    head = (
        "| config | split | candidates | policy samples | reference solutions | mutants "
        "| rows mixing origins | rows with `generator` `mixed` | policy models |"
    )
    lines = [head, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for f in facts:
        if f.kind == "questions":
            continue
        cells = [
            f"{f.origins.get(o, 0)} ({F.share(f.origins.get(o, 0), f.candidates)})"
            for o in F.ORIGINS
        ]
        models = ", ".join(f"`{m}`" for m in f.origin_generators.get("policy", {})) or "-"
        lines.append(
            f"| {f.config} | {f.split} | {f.candidates} | "
            + " | ".join(cells)
            + f" | {f.mixed_origin_rows} | {f.generators.get('mixed', 0)} | {models} |"
        )
    return "\n".join(lines)


def holds_md(facts: list[F.SplitFacts], splits: Splits) -> str:
    """Each config in a few measured sentences: an evaluation config's `full` split, then
    its `test` split (one line when the two hold the same rows)."""
    out = []
    for cfg in CONFIGS:
        mine = [f for f in facts if f.config == cfg.name]
        if not mine:
            continue
        by = {f.split: f for f in mine}
        if cfg.side == "train":
            out.append(f"- **`{cfg.name}`**: {F.describe(by['train'])}")
        elif F.same_rows(splits[cfg.name]["test"], splits[cfg.name]["full"]):
            out.append(f"- **`{cfg.name}`** (`test` = `full`): {F.describe(by['full'])}")
        else:
            out.append(
                f"- **`{cfg.name}`** `full`: {F.describe(by['full'])}\n"
                f"  `test`: {F.describe(by['test'])}"
            )
    return "\n".join(out)


def load_target(repo_id: str | None, folder: str | Path) -> str:
    """What the card's load line names: the Hub repo when there is one, else the folder as
    it was built (a relative path stays relative to where the build ran)."""
    return repo_id or str(folder)


def examples_md(splits: Splits) -> str:
    """One example row per config (its `train` split, or an evaluation config's `test`): a
    few fields cut to one line, a table per kind of config; each config links its whole row."""
    out = []
    for kind, fields in card_example.EXAMPLE_FIELDS.items():
        lines = []
        for cfg in (c for c in CONFIGS if c.name in splits and c.kind == kind):
            row = card_example.first_row(splits[cfg.name][cfg.split])
            if row is None:
                continue
            cells = [f"[`{cfg.name}`]({card_example.example_path(cfg.name)})", f"`{cfg.split}`"]
            lines.append(
                "| " + " | ".join(cells + [card_example.excerpt(row[f]) for f in fields]) + " |"
            )
        if lines:
            head = "| config | split | " + " | ".join(f"`{f}`" for f in fields) + " |"
            out.append("\n".join([head, "|" + " --- |" * (len(fields) + 2), *lines]))
    return "\n\n".join(out)


def trl_md(tables: dict[str, pa.Table], load_from: str) -> str:
    """How to train on a DPO config with TRL's `DPOTrainer` ('' without one); the snippet
    keeps one prompt style where the rows hold two (a verifier is trained on one)."""
    name = next((c.name for c in CONFIGS if c.kind == "dpo" and c.name in tables), None)
    if name is None:
        return ""
    variants = sorted(set(tables[name].column("prompt_variant").to_pylist()))
    keep = (
        f'\npairs = pairs.filter(lambda r: r["prompt_variant"] == "{variants[-1]}")'
        f"  # rows of {' and '.join(variants)} prompts"
        if len(variants) > 1
        else ""
    )
    return f"""## Training a verifier with TRL

`{name}` and `mixed_dpo` are in TRL's conversational preference format: `prompt` is the
verifier prompt as chat messages (think: the user turn; instruct: the system and user
turns), `chosen` and `rejected` one assistant message each, the whole turn the verifier
model wrote (a think turn starts with its pre-fill `<think>`). `DPOTrainer` renders the
prompt with the model's chat template and a generation prompt, then the turn: the text the
verifier generated. A chat template that rewrites an assistant turn changes what is trained:
DeepSeek-R1-Distill's keeps only the text after the last `</think>`, so with it `DPOTrainer`
trains on the box alone. For such a model, give `DPOTrainer` text rows instead: the prompt
rendered with `continue_final_message` after an assistant turn holding `<think>\n`, and
`chosen` / `rejected` the rest of each turn followed by EOS (the project's `aletheia train`
does this; `aletheia train --show-example` prints what it trains on).

```python
from datasets import load_dataset
from trl import DPOConfig, DPOTrainer

pairs = load_dataset("{load_from}", "{name}", split="train"){keep}
trainer = DPOTrainer(
    model="Qwen/Qwen3-1.7B",  # the verifier to train
    args=DPOConfig(output_dir="verifier-dpo", max_length=20480),
    train_dataset=pairs.select_columns(["prompt", "chosen", "rejected"]),
)
trainer.train()
```"""


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


def prompt_wording_md(run_config: dict[str, Any]) -> str:
    """The wording of the verifier prompt the rows were built with (the DPO rows' `prompt`,
    the prompts measured for the token cap): the project's, the user's templates or
    Aletheia's own, read from a checkout (`aletheia_src`) and named with its hash."""
    from pipeline.common.verifier_prompt import PromptSpec, wording, wording_line

    dpo = run_config.get("dpo") or {}
    src = dpo.get("aletheia_src") or run_config.get("aletheia_src")
    files = {k: dpo.get(k) or run_config.get(k) for k in ("prompt_template", "system_template")}
    try:
        spec = PromptSpec(
            style="instruct" if files["system_template"] else "think",
            template=None if src else files["prompt_template"],
            system_template=None if src else files["system_template"],
            aletheia_src=src,
        )
        return wording_line(wording(spec))
    except (OSError, ValueError):  # the checkout or a template is not on this machine
        named = src or ", ".join(f for f in files.values() if f)
        return f"Verifier prompt: read from {named} (not readable where this card was written)."


def checks_table(results: list[CheckResult]) -> str:
    lines = ["| check | invariant | rows checked | result |", "| --- | --- | ---: | --- |"]
    for r in results:
        status = "pass" if r.passed else f"FAIL ({len(r.violations)} rows)"
        lines.append(f"| {r.name} | {r.invariant} | {r.checked_rows} | {status} |")
    return "\n".join(lines)


RUN_CONFIG_FILE = "details/run_config.yaml"
CANDIDATES_FILE = "details/candidates.md"


def candidates_md(splits: Splits, manifest: BuildManifest) -> str:
    """The release file of the candidate tables: every candidate by origin, and by who wrote
    it and its sandbox verdict (measured from the rows, as the card)."""
    tables = main_tables(splits)
    facts = F.measure_all(splits)
    note = policy_note(manifest.run_config)
    note = "\n" + note if note else ""
    return f"""# Candidates of build `{manifest.build_id}`

## By origin

Every candidate of every row, by origin (a candidate that appears in several rows is
counted in each), the rows whose candidates come from more than one origin, and the rows
whose `generator` is `mixed` (candidates of several generators).

{origins_table(facts)}

## By model and verdict

Every candidate of every instance config, by who wrote it (`origin`) and its sandbox
verdict.
{note}
{verdict_mix_table(tables)}
"""


def release_files(splits: Splits, manifest: BuildManifest) -> dict[str, str]:
    """The card's long parts, as files of the Hub folder (path -> text): the whole run config
    (credentials redacted), each config's first row whole, the candidate tables."""
    files = {
        RUN_CONFIG_FILE: yaml.safe_dump(
            redact(manifest.run_config), sort_keys=True, allow_unicode=True
        ),
        CANDIDATES_FILE: candidates_md(splits, manifest),
    }
    for cfg in CONFIGS:
        if cfg.name in splits and (text := example_yaml(splits[cfg.name][cfg.split])):
            files[card_example.example_path(cfg.name)] = text
    return files


def render_card(
    splits: Splits,
    manifest: BuildManifest,
    results: list[CheckResult],
    plots: dict[str, str],
    *,
    pretty_name: str = "Aletheia (regenerated)",
    license: str | None = None,
    info: list[dict[str, Any]] | None = None,
    load_from: str = "<this repo or folder>",
) -> str:
    """The card. `info`: the header's `dataset_info` (`card_info.dataset_info`); `load_from`:
    the repo id or folder the load lines name (`load_target`)."""
    tables = main_tables(splits)
    facts = F.measure_all(splits)
    license = license or sections.derived_license(tables)  # None: from the sources' licenses
    # Lists and mappings of plain values on one line each (`- {split: test, path: ...}`): the
    # same YAML to every reader, a third of the lines.
    meta = yaml.safe_dump(
        front_matter(splits, pretty_name, license, info),
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=None,
        width=100,
    )
    configs_md = "\n".join(
        f"| `{c.name}` | "
        + ", ".join(f"`{s}` ({splits[c.name][s].num_rows})" for s in c.splits)
        + f" | {c.description} |"
        for c in CONFIGS
        if c.name in tables
    )
    models = models_used(tables)
    models_md = "\n".join(
        f"- {k}: " + (", ".join(f"`{m}`" for m in v) if v else "none") for k, v in models.items()
    )
    seeds_md = ", ".join(f"`{k}={v}`" for k, v in sorted(manifest.seeds.items())) or "none recorded"
    plots_md = "\n\n".join(f"![{cap}](assets/{f})" for f, cap in plots.items())
    first = next(iter(c.name for c in CONFIGS if c.name in tables), "train")
    sizes = F.all_sizes(facts)
    eval_name = next((c.name for c in CONFIGS if c.name in tables and c.side == "eval"), None)
    eval_line = (
        f'\n{eval_name} = load_dataset("{load_from}", "{eval_name}", split="test")'
        '  # or split="full"'
        if eval_name
        else ""
    )
    trl = trl_md(tables, load_from)
    return f"""---
{meta}---

# {pretty_name}

Execution-grounded data for training and evaluating **code verifiers**: models that read
a programming problem and a list of candidate programs and pick the one that is correct.
Every candidate was compiled and run against the problem's tests in a locked-down Docker
sandbox; an instance has exactly one candidate that passed every test. In this build a
row holds {F.count_phrase(sizes)}.

```python
from datasets import load_dataset

ds = load_dataset("{load_from}", "{first}"){eval_line}
```

## Configs

| config | splits (rows) | what a row is |
| --- | --- | --- |
{configs_md}

### What each config holds

Measured from the published rows: list sizes, tiers (`weak_strong`), bands (`easy_hard`),
languages (a row's `language`), where the candidates come from (`candidate_origins`:
`policy` for a model's sample, `reference` for a solution shipped with the problem,
`mutant` for a tree-sitter mutation of a correct one; every candidate by origin and by
verdict: [{CANDIDATES_FILE}]({CANDIDATES_FILE})) and the pass rates of the incorrect
candidates.

{holds_md(facts, splits)}

{sections.splits_md(splits, facts, manifest.run_config)}

{trl}

## Data fields

Rows lead with Aletheia's field names and types (`prompt_id` is the problem's id, shared by
its instances), with provenance columns beside them.

{sections.data_fields_md(tables)}

## Example rows

The first row of each config, a few fields cut to one line (`…`); the config's link opens
the whole row as YAML.

{examples_md(splits)}

## Counts

{counts_table(facts)}

{position_mix_md(facts)}

{dpo_routes_md(tables)}

{dpo_cues_md(tables)}

## What this build contains

{sections.contents_md(facts, manifest.run_config)}

## Sources

Problems, statements and tests come from these sources, under their licenses; the
candidates, verdicts and responses are this build's own. Front-matter license: `{license}`.

{sections.sources_md(tables)}

## How it was built

- build id: `{manifest.build_id}`
- pipeline version: `{manifest.pipeline_version}`
- sandbox image: `{manifest.sandbox_image or "unknown"}`
- seeds: {seeds_md}
- run config (credentials redacted): [{RUN_CONFIG_FILE}]({RUN_CONFIG_FILE})
- {prompt_wording_md(manifest.run_config)}
{models_md}

{policy_note(manifest.run_config)}
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
