"""Stage entry points: Parquet in, Parquet out, a stats dict back (the flows wire these).

Each is cached through `pipeline.common.stage`: its key hashes (stage, version, config,
input files, seed), and a folder whose `_stage.json` holds the key is reused untouched.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from pipeline.instances.config import AdversarialConfig, AssembleConfig, DPOConfig
from schemas.common import QUARANTINE_SCHEMA
from schemas.instance import INSTANCE_SCHEMA

if TYPE_CHECKING:
    from pipeline.judge.interface import SandboxSection
    from sandbox.engines import JudgeEngine

ASSEMBLE_VERSION = "3"  # 2: Aletheia selection, token caps; 3: listwise eval sets + test splits
# 2: per-row construction, modification column; 3: not_rejudged total; 4: edits proven
# unchanged carry their verdict (carried_unchanged)
ADVERSARIAL_VERSION = "4"
ADVERSARIAL_EDITS_VERSION = "2"  # 2: edits proven unchanged are not written for the judge
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
    """Write `<split>.parquet` (INSTANCE_SCHEMA) per configured split (an evaluation split's
    `test` split beside it as `<split>.test.parquet`), quarantine.parquet, stats.json."""
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
    from pipeline.instances.adversarial.apply import carries_verdict
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
    # Edits proven unchanged keep their verdict (adversarial/unchanged.py): not judged.
    carried = [e for e in planned if carries_verdict(e, config)]
    cands = edit_candidates([e for e in planned if not carries_verdict(e, config)], rows)
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
        "edits_carried_unchanged": len(carried),
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
    client: JudgeEngine | None = None,
    judged_edits: Path | None = None,
    sandbox: SandboxSection | None = None,
) -> dict[str, Any]:
    """Adv / Mixed: write `<out>/<config.split>.parquet` (INSTANCE_SCHEMA) and stats.json.

    `judged_edits`: the judged table (JUDGED_CANDIDATE_SCHEMA) of `adversarial_edits`'
    output, judged by the judge shards; each edit's verdict is read from it by (problem_id,
    candidate_id), and an edit it lacks is counted `not_rejudged`. None: judge the edits
    here, through `client` (a judge engine; None opens the one `sandbox` names, only if there
    is an edit to judge, and closes it afterwards). Both give the same rows.
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
                    from pipeline.judge.interface import open_judge

                    client = open_judge(sandbox)
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


def build_dpo(instances: Path, out: Path, config: DPOConfig, backend: Any = None) -> dict[str, Any]:
    """DPO / Mixed-DPO in one process: write `<out>/<config.name>.parquet` (DPO_SCHEMA) and
    stats.json, with the responses under `<out>/responses/` (one shard of every instance).

    The composition of the stage's two parts (`pipeline.instances.dpo.stage`); the flow runs
    the same parts with the responses split into shards. `backend`: one Backend (one judge),
    a mapping judge name -> Backend, or None to build each configured judge's backend.
    """
    from pipeline.instances.dpo.stage import dpo_pairs, resolve_judges, shard_responses

    config = resolve_judges(config, backend)
    files, _ = shard_responses(Path(instances), Path(out) / "responses", config, backend)
    return dpo_pairs(Path(instances), files, Path(out), config)
