"""Stage entry points: Parquet in, Parquet out, a stats dict back (the flows wire these).

Each is cached through `pipeline.common.stage`: its key hashes (stage, version, config,
input files, seed), and a folder whose `_stage.json` holds the key is reused untouched.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.stage import is_done, mark_done, read_stats, stage_key
from pipeline.instances.assemble import (
    CANDIDATE_COLUMNS,
    PROBLEM_COLUMNS,
    AssemblyInputError,
    assemble_frames,
)
from pipeline.instances.checks import disjoint_problem_violations, instance_violations, require
from pipeline.instances.config import AdversarialConfig, AssembleConfig, DPOConfig, JudgeModelSpec
from schemas.common import QUARANTINE_SCHEMA
from schemas.dpo import DPO_SCHEMA
from schemas.instance import INSTANCE_SCHEMA

ASSEMBLE_VERSION = "2"  # 2: Aletheia selection, token caps, prompt_id = problem
ADVERSARIAL_VERSION = "3"  # 2: per-row construction, modification column; 3: not_rejudged total
ADVERSARIAL_EDITS_VERSION = "1"
DPO_VERSION = "2"  # 2: Aletheia construction, chosen_source, shared prompt and reader
STATS_FILE = "stats.json"


def _write_stats(out_dir: Path, name: str, stats: dict[str, Any]) -> None:
    (out_dir / name).write_text(json.dumps(stats, indent=2, sort_keys=True, default=str) + "\n")


def _assignments(splits_dir: Path) -> pl.DataFrame:
    """Problem -> split, from assignments.parquet or else from train/heldout.parquet."""
    path = splits_dir / "assignments.parquet"
    if path.exists():
        return pl.read_parquet(path, columns=["problem_id", "split"])
    parts = []
    for split in ("train", "heldout"):
        p = splits_dir / f"{split}.parquet"
        if not p.exists():
            raise FileNotFoundError(
                f"{splits_dir}: neither assignments.parquet nor {split}.parquet"
            )
        parts.append(pl.read_parquet(p, columns=["problem_id"]).with_columns(split=pl.lit(split)))
    return pl.concat(parts)


def _split_inputs(splits_dir: Path) -> list[Path]:
    return sorted(p for p in splits_dir.glob("*.parquet"))


def assemble(
    judged: Path, problems: Path, splits_dir: Path, out_dir: Path, config: AssembleConfig
) -> dict[str, Any]:
    """Write `<split>.parquet` (INSTANCE_SCHEMA) per configured split, quarantine.parquet, stats.json."""
    judged, problems, splits_dir, out_dir = (
        Path(judged),
        Path(problems),
        Path(splits_dir),
        Path(out_dir),
    )
    key = stage_key(
        "assemble",
        ASSEMBLE_VERSION,
        config,
        [judged, problems, *_split_inputs(splits_dir)],
        config.seed,
    )
    if is_done(out_dir, key):
        return read_stats(out_dir)
    try:
        judged_df = pl.read_parquet(judged, columns=CANDIDATE_COLUMNS)
        problems_df = pl.read_parquet(problems, columns=PROBLEM_COLUMNS)
    except pl.exceptions.ColumnNotFoundError as e:
        raise AssemblyInputError(f"{judged.name} / {problems.name}: {e}") from e
    tables, quarantine, stats = assemble_frames(
        judged_df, problems_df, _assignments(splits_dir), config
    )

    for name, table in tables.items():
        require(instance_violations(table), f"assemble {name}")
    train_names = [s.name for s in config.splits if s.problems == "train"]
    eval_tables = [tables[s.name] for s in config.splits if s.problems == "heldout"]
    for name in train_names:
        require(
            disjoint_problem_violations(tables[name], eval_tables),
            f"assemble {name} vs eval splits",
        )

    out_dir.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        write_parquet(table, out_dir / f"{name}.parquet", INSTANCE_SCHEMA)
    write_parquet(
        pa.Table.from_pylist(quarantine, schema=QUARANTINE_SCHEMA),
        out_dir / "quarantine.parquet",
        QUARANTINE_SCHEMA,
    )
    stats["outputs"] = {name: f"{name}.parquet" for name in tables}
    _write_stats(out_dir, STATS_FILE, stats)
    mark_done(out_dir, key, "assemble", stats)
    return stats


def _adversarial_rows(instances: Path) -> list[dict[str, Any]]:
    return read_parquet(instances, INSTANCE_SCHEMA).to_pylist()


def adversarial_edits(
    instances: Path, problems: Path, out_dir: Path, config: AdversarialConfig
) -> dict[str, Any]:
    """Plan the bias edits (no sandbox) and write the edited programs for the judge shards:
    `<out_dir>/edits.parquet` (CANDIDATE_SCHEMA, one row per distinct edited program) and
    stats.json (edits planned per bias type).

    `adversarial(..., judged_edits=<that file judged>)` re-plans the same edits (same
    config and seed, same plan) and reads their verdicts back.
    """
    from pipeline.instances.adversarial.rejudge import edit_candidates, planned_edits
    from schemas.candidate import CANDIDATE_SCHEMA
    from schemas.tables import models_to_table

    instances, problems, out_dir = Path(instances), Path(problems), Path(out_dir)
    # The judge settings do not change the plan: not part of this key.
    keyed = config.model_dump(mode="json", exclude={"judge"})
    key = stage_key(
        "adversarial-edits", ADVERSARIAL_EDITS_VERSION, keyed, [instances, problems], config.seed
    )
    if is_done(out_dir, key):
        return read_stats(out_dir)
    rows = _adversarial_rows(instances)
    planned, counts = planned_edits(rows, config)
    known = set(pl.read_parquet(problems, columns=["problem_id"])["problem_id"].to_list())
    for edit in planned:
        if edit.problem_id not in known:
            raise ValueError(
                f"{instances.name}: instance {rows[edit.row]['instance_id']}: problem_id "
                f"{edit.problem_id!r} is not in {problems} (its edits could not be judged)"
            )
    cands = edit_candidates(planned, rows)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_parquet(
        models_to_table(cands, CANDIDATE_SCHEMA), out_dir / "edits.parquet", CANDIDATE_SCHEMA
    )
    by_bias: dict[str, int] = {}
    for e in planned:
        by_bias[e.bias] = by_bias.get(e.bias, 0) + 1
    stats = {
        "construction": config.construction,
        "split": config.split,
        "instances_in": len(rows),
        "edits_planned": len(planned),
        "distinct_programs": len(cands),
        "edits_planned_by_bias": dict(sorted(by_bias.items())),
        "planning_by_bias": {k: dict(sorted(counts[k].items())) for k in sorted(counts)},
        "output": "edits.parquet",
    }
    _write_stats(out_dir, STATS_FILE, stats)
    mark_done(out_dir, key, "adversarial-edits", stats)
    return stats


def adversarial(
    instances: Path,
    problems: Path,
    out: Path,
    config: AdversarialConfig,
    client: Any = None,
    judged_edits: Path | None = None,
) -> dict[str, Any]:
    """Adv / Mixed: write `<out>/<config.split>.parquet` (INSTANCE_SCHEMA) and stats.json.

    `judged_edits`: the judged table (JUDGED_CANDIDATE_SCHEMA) of `adversarial_edits`'
    output, judged by the judge shards; each edit's verdict is read from it by (problem_id,
    candidate_id), and an edit it lacks is counted `not_rejudged`. None: judge the edits
    here, through `client` (a sandbox client; None starts one only if there is an edit to
    judge, and closes it afterwards). Both give the same rows.
    """
    from pipeline.instances.adversarial.apply import apply_edits, sandbox_rejudge
    from pipeline.instances.adversarial.rejudge import table_rejudge
    from pipeline.judge.stage import load_problems

    instances, problems, out = Path(instances), Path(problems), Path(out)
    inputs = [instances, problems] + ([Path(judged_edits)] if judged_edits is not None else [])
    # Whether a progress bar is shown does not change the output: not part of the key.
    keyed = config.model_dump(mode="json", exclude={"judge": {"progress"}})
    key = stage_key("adversarial", ADVERSARIAL_VERSION, keyed, inputs, config.seed)
    if is_done(out, key):
        return read_stats(out)
    rows = _adversarial_rows(instances)
    if judged_edits is not None:
        out_rows, stats = apply_edits(rows, config, table_rejudge(Path(judged_edits)))
    else:
        problem_models = load_problems(problems)
        own = client is None
        try:

            def rejudge(edits: list[Any]) -> list[Any]:
                nonlocal client
                if client is None:
                    from sandbox import SandboxClient

                    client = SandboxClient()
                return sandbox_rejudge(problem_models, client, config)(edits)

            out_rows, stats = apply_edits(rows, config, rejudge)
        finally:
            if own and client is not None:
                client.close()
    table = pa.Table.from_pylist(out_rows, schema=INSTANCE_SCHEMA)
    require(instance_violations(table), f"adversarial {config.split}")
    out.mkdir(parents=True, exist_ok=True)
    write_parquet(table, out / f"{config.split}.parquet", INSTANCE_SCHEMA)
    stats["output"] = f"{config.split}.parquet"
    _write_stats(out, STATS_FILE, stats)
    mark_done(out, key, "adversarial", stats)
    return stats


def _judge_backends(config: DPOConfig, backend: Any) -> tuple[dict[str, Any], list[Any]]:
    """name -> backend for every judge (and the fallback judge), and those we must close."""
    from pipeline.sampling.backends.base import Backend

    owned: list[Any] = []
    given: dict[str, Any] = {}
    if isinstance(backend, Backend):
        if len(config.judges) > 1:
            raise ValueError("dpo: several judges are configured; pass a mapping name -> backend")
        name = (
            config.judges[0].name if config.judges else getattr(backend, "model_name", backend.name)
        )
        given[name] = backend
    elif backend is not None:
        given.update(backend)
    specs = list(config.judges) or [JudgeModelSpec(name=n) for n in given]
    if config.fallback_judge is not None and config.fallback == "strong_judge":
        specs.append(config.fallback_judge)
    out: dict[str, Any] = {}
    for spec in specs:
        if spec.name in given:
            out[spec.name] = given[spec.name]
        elif spec.model_path is not None:
            from pipeline.sampling.backends.transformers_backend import TransformersBackend

            out[spec.name] = TransformersBackend(spec.model_path, model_name=spec.name)
            owned.append(out[spec.name])
        else:
            raise ValueError(
                f"dpo: judge {spec.name!r} has no model_path and no backend was passed"
            )
    if not out:
        raise ValueError("dpo: no judge models (configure judges or pass a backend)")
    return out, owned


def _dpo_key(instances: Path, config: DPOConfig, backends: dict[str, Any]) -> str:
    described = {
        n: b.describe() if hasattr(b, "describe") else {"name": n}
        for n, b in sorted(backends.items())
    }
    templates = [Path(t) for t in (config.prompt_template, config.system_template) if t]
    return stage_key(
        "dpo",
        DPO_VERSION,
        {"config": config.model_dump(mode="json"), "backends": described},
        [instances, *templates],
        config.seed,
    )


def _roles(config: DPOConfig, backends: dict[str, Any]) -> tuple[list[str], str, list[str]]:
    """(judges that sample for every instance, the strong judge, the rejected-side judges)."""
    fallback = (
        config.fallback_judge.name
        if config.fallback == "strong_judge" and config.fallback_judge
        else None
    )
    judges = [n for n in backends if n != fallback] or list(backends)
    strong = config.strong_judge or judges[-1]
    rejected = config.rejected_judges or [j for j in judges if j != strong] or [strong]
    return judges, strong, rejected


def _sample_variant(
    rows: list[dict[str, Any]],
    backends: dict[str, Any],
    judges: list[str],
    variant: str,
    config: DPOConfig,
) -> tuple[dict[str, list[Any]], int]:
    """instance_id -> every judge's responses; and how many instances needed the
    on-policy fallback judge."""
    from pipeline.instances.dpo.responses import sample_responses

    responses: dict[str, list[Any]] = {r["instance_id"]: [] for r in rows}
    for judge in judges:
        got = sample_responses(
            rows, backends[judge], judge, variant, config, config.samples_per_judge
        )
        for iid, rs in got.items():
            responses[iid] += rs
    if config.construction != "on_policy" or config.fallback != "strong_judge":
        return responses, 0
    assert config.fallback_judge is not None
    lacking = [
        r
        for r in rows
        if not any(x.answer == r["chosen_answer"] for x in responses[r["instance_id"]])
    ]
    if lacking:
        name = config.fallback_judge.name
        got = sample_responses(
            lacking, backends[name], name, variant, config, config.fallback_samples
        )
        for iid, rs in got.items():
            responses[iid] += rs
    return responses, len(lacking)


def _count_responses(accuracy: dict[str, dict[str, int]], gold: str, responses: list[Any]) -> None:
    for r in responses:
        acc = accuracy.setdefault(
            r.judge_model, {"responses": 0, "correct": 0, "invalid": 0, "errors": 0}
        )
        acc["responses"] += 1
        acc["correct"] += r.answer == gold
        acc["invalid"] += r.answer is None
        acc["errors"] += r.finish_reason.startswith("error")


def _pairs_for_variant(
    rows: list[dict[str, Any]],
    responses: dict[str, list[Any]],
    variant: str,
    config: DPOConfig,
    roles: tuple[list[str], str, list[str]],
    tally: dict[str, Any],
) -> list[dict[str, Any]]:
    """The DPO rows of one prompt variant, by the configured construction."""
    from pipeline.instances.dpo.aletheia import RejectedQuotas, pick_pair
    from pipeline.instances.dpo.pairs import dpo_row
    from pipeline.instances.dpo.responses import verifier_messages

    _, strong, rejected_judges = roles
    quotas = RejectedQuotas.equal(rejected_judges, len(rows))
    balancer = tally["balancer"]
    out: list[dict[str, Any]] = []
    for row in rows:
        rs = responses[row["instance_id"]]
        _count_responses(tally["accuracy"], row["chosen_answer"], rs)
        if config.construction == "aletheia":
            pair, why = pick_pair(
                row["instance_id"], variant, row["chosen_answer"], rs, strong, quotas, config.seed
            )
            pairs = [pair] if pair is not None else []
        else:
            pairs, why = balancer.pick(
                row["instance_id"], variant, row["chosen_answer"], rs, config.pairs_per_instance
            )
        if why is not None:
            tally["skipped"][why] = tally["skipped"].get(why, 0) + 1
        if pairs:
            prompt = verifier_messages(row, variant, config)
            user = next(m["content"] for m in prompt if m["role"] == "user")
            out += [dpo_row(row, p, user, config.split) for p in pairs]
    return out


def build_dpo(instances: Path, out: Path, config: DPOConfig, backend: Any = None) -> dict[str, Any]:
    """DPO / Mixed-DPO: write `<out>/<config.name>.parquet` (DPO_SCHEMA) and stats.json.

    `backend`: one Backend (one judge), a mapping judge name -> Backend, or None to load
    each configured judge's `model_path` with the transformers backend.
    """
    from pipeline.instances.dpo.pairs import PairBalancer

    instances, out = Path(instances), Path(out)
    backends, owned = _judge_backends(config, backend)
    key = _dpo_key(instances, config, backends)
    tally: dict[str, Any] = {"balancer": PairBalancer(config.seed), "skipped": {}, "accuracy": {}}
    fallback_used = 0
    dpo_rows: list[dict[str, Any]] = []
    try:
        if is_done(out, key):
            return read_stats(out)
        rows = read_parquet(instances, INSTANCE_SCHEMA).to_pylist()
        roles = _roles(config, backends)
        for variant in config.variants:
            responses, used = _sample_variant(rows, backends, roles[0], variant, config)
            fallback_used += used
            dpo_rows += _pairs_for_variant(rows, responses, variant, config, roles, tally)
    finally:
        for b in owned:
            b.close()
    table = pa.Table.from_pylist(dpo_rows, schema=DPO_SCHEMA)
    require(instance_violations(table), f"dpo {config.name}")
    out.mkdir(parents=True, exist_ok=True)
    write_parquet(table, out / f"{config.name}.parquet", DPO_SCHEMA)
    stats = {
        "instances": len(rows),
        "construction": config.construction,
        "variants": list(config.variants),
        "pairs": len(dpo_rows),
        "chosen_source": {
            s: sum(1 for r in dpo_rows if r["chosen_source"] == s)
            for s in ("sampled", "gold_spliced")
        },
        "instances_short_of_pairs": dict(sorted(tally["skipped"].items())),
        "fallback_samples_for_instances": fallback_used,
        "chosen_by_judge": _count_by(dpo_rows, "judge_model"),
        "rejected_by_judge": _count_by(dpo_rows, "rejected_judge_model"),
        "responses_by_judge": dict(sorted(tally["accuracy"].items())),
        "output": f"{config.name}.parquet",
    }
    _write_stats(out, STATS_FILE, stats)
    mark_done(out, key, "dpo", stats)
    return stats


def _count_by(rows: list[dict[str, Any]], column: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r[column]] = counts.get(r[column], 0) + 1
    return dict(sorted(counts.items()))
