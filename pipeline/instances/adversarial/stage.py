"""The Adv / Mixed stages as values , run by pipeline/common/runner.py.

ADVERSARIAL_EDITS plans the bias edits (no sandbox) and writes the edited programs for
the judge shards; ADVERSARIAL re-plans the same edits (same config and seed) and builds
the split from their verdicts: read from the judged edits table, or, when that input is
empty, judged here through an engine (`judging_here`). Both give the same rows.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa

from pipeline.common.config import RunnerSection
from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.progress import progress_file
from pipeline.common.stage import Finished, Keying, ShardContext, Shown, Stage, Stats
from pipeline.instances.adversarial.config import AdversarialConfig
from pipeline.instances.checks import instance_violations, require
from pipeline.instances.stats_file import STATS_FILE, write_stats
from schemas.instance import INSTANCE_SCHEMA

if TYPE_CHECKING:
    from pipeline.judge.config import SandboxSection
    from sandbox.engines import JudgeEngine

# 2: per-row construction, modification column; 3: not_rejudged total; 4: edits proven
# unchanged carry their verdict (carried_unchanged)
ADVERSARIAL_VERSION = "4"
ADVERSARIAL_EDITS_VERSION = "2"  # 2: edits proven unchanged are not written for the judge
EDITS_FILE = "edits.parquet"


def _rows(instances: Path) -> list[dict[str, Any]]:
    return read_parquet(instances, INSTANCE_SCHEMA).to_pylist()


# ---------------------------------------------------------------------- the edits
def edits_outputs(config: AdversarialConfig, out: Path) -> dict[str, Path]:
    return {"edits": out / EDITS_FILE, "stats": out / STATS_FILE}


def run_edits(ctx: ShardContext[AdversarialConfig]) -> Stats:
    """Write `edits.parquet` (CANDIDATE_SCHEMA, one row per distinct edited program that
    needs a verdict) and stats.json (edits planned per bias type)."""
    from pipeline.instances.adversarial.apply import carries_verdict
    from pipeline.instances.adversarial.rejudge import edit_candidates, planned_edits
    from schemas.candidate import CANDIDATE_SCHEMA
    from schemas.tables import models_to_table

    config = ctx.config
    instances, problems = Path(ctx.inputs["instances"]), Path(ctx.inputs["problems"])
    rows = _rows(instances)
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
    outputs = edits_outputs(config, ctx.out)
    write_parquet(models_to_table(cands, CANDIDATE_SCHEMA), outputs["edits"], CANDIDATE_SCHEMA)
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
        "output": EDITS_FILE,
    }
    write_stats(ctx.out, stats)
    return stats


def _edits_line(stats: Stats) -> str:
    return (
        f"{stats.get('edits_planned', 0)} bias edits planned, "
        f"{stats.get('edits_carried_unchanged', 0)} proven unchanged (verdict carried), "
        f"{stats.get('distinct_programs', 0)} programs to re-judge"
    )


def _edits_plan(config: AdversarialConfig, runner: RunnerSection) -> str:
    return f"{config.split}: bias edits on a {config.share} share ({config.construction})"


ADVERSARIAL_EDITS: Stage[AdversarialConfig] = Stage(
    name="adversarial-edits",
    version=ADVERSARIAL_EDITS_VERSION,
    config=AdversarialConfig,
    inputs=("instances", "problems"),
    outputs=edits_outputs,
    run=run_edits,
    plan=_edits_plan,
    key=Keying(frozenset({"judge"})),  # the judge settings do not change the plan
    reports=lambda config, out: progress_file(out),
    shows=lambda done: Shown(lines=(_edits_line(done.stats),)),
)


# ---------------------------------------------------------------------- the split
REJUDGE_COLUMNS = (
    "planned",
    "accepted",
    "carried_unchanged",
    "rejected_verdict_changed",
    "rejected_pass_rate_changed",
    "rejudge_sandbox_error",
    "not_rejudged",
    "copies_rejected_by_rejudge",
)


def rejected_edits(stats: Stats) -> list[dict[str, Any]]:
    """Per bias type: edits planned, accepted and rejected by the re-judge (and why), from
    the adversarial stage's stats (`by_bias`); `planned` counts row copies (per_row) or
    edits (per_candidate), the rest count edits, `copies_rejected_by_rejudge` row copies."""
    return [
        {"bias": bias, **{c: int(counts.get(c, 0)) for c in REJUDGE_COLUMNS}}
        for bias, counts in sorted(stats.get("by_bias", {}).items())
    ]


def _shown(done: Finished) -> Shown:
    """Its bias edits per type, accepted or rejected by the re-judge: a table in the UI."""
    about = "bias edits per type, planned / accepted / rejected by the re-judge"
    return Shown(tables={"rejected-edits": (about, rejected_edits(done.stats))})


def adversarial_outputs(config: AdversarialConfig, out: Path) -> dict[str, Path]:
    return {config.split: out / f"{config.split}.parquet", "stats": out / STATS_FILE}


def _judged_edits(value: Path | list[Path]) -> Path | None:
    """The judged edits table, or None (an empty list: judge the edits here)."""
    files = [value] if isinstance(value, (str, Path)) else list(value)
    if len(files) > 1:
        raise ValueError(f"adversarial: one judged edits table expected, got {len(files)}")
    return Path(files[0]) if files else None


def run_adversarial(
    ctx: ShardContext[AdversarialConfig],
    *,
    client: JudgeEngine | None = None,
    sandbox: SandboxSection | None = None,
) -> Stats:
    """Write `<config.split>.parquet` (INSTANCE_SCHEMA) and stats.json.

    Each edit's verdict is read from the `judged_edits` input by (problem_id, candidate_id)
    (an edit it lacks is counted `not_rejudged`). Without that input the edits are judged
    here, through `client`, else through the engine `sandbox` names, opened only if an
    edit needs judging and closed with the run."""
    from pipeline.instances.adversarial.apply import apply_edits, sandbox_rejudge
    from pipeline.instances.adversarial.rejudge import table_rejudge

    config = ctx.config
    rows = _rows(Path(ctx.inputs["instances"]))
    judged = _judged_edits(ctx.inputs["judged_edits"])
    if judged is not None:
        out_rows, stats = apply_edits(rows, config, table_rejudge(judged))
    else:
        from pipeline.judge.stage import load_problems

        problem_models = load_problems(Path(ctx.inputs["problems"]))

        def rejudge(edits: list[Any]) -> list[Any]:
            nonlocal client
            if client is None:
                from pipeline.judge.interface import open_judge

                client = open_judge(sandbox)
                ctx.resources.callback(client.close)  # ours: closed with the run
            return sandbox_rejudge(problem_models, client, config)(edits)

        out_rows, stats = apply_edits(rows, config, rejudge)
    table = pa.Table.from_pylist(out_rows, schema=INSTANCE_SCHEMA)
    require(instance_violations(table), f"adversarial {config.split}")
    write_parquet(table, adversarial_outputs(config, ctx.out)[config.split], INSTANCE_SCHEMA)
    stats["output"] = f"{config.split}.parquet"
    write_stats(ctx.out, stats)
    return stats


def _adversarial_plan(config: AdversarialConfig, runner: RunnerSection) -> str:
    return (
        f"{config.split}: the edited programs re-judged as {runner.judge_shards} judge "
        f"shard(s) on {runner.kind}"
    )


ADVERSARIAL: Stage[AdversarialConfig] = Stage(
    name="adversarial",
    version=ADVERSARIAL_VERSION,
    config=AdversarialConfig,
    # judged_edits: the judge shards' table of ADVERSARIAL_EDITS' programs; [] = judge here
    inputs=("instances", "problems", "judged_edits"),
    outputs=adversarial_outputs,
    run=run_adversarial,
    plan=_adversarial_plan,
    # Whether a progress bar is shown does not change the output: not part of the key.
    key=Keying({"judge": {"progress"}}),
    shows=_shown,
)


def judging_here(
    client: JudgeEngine | None = None, sandbox: SandboxSection | None = None
) -> Stage[AdversarialConfig]:
    """ADVERSARIAL with its edits judged in this process (run it with `judged_edits: []`):
    through `client`, or the engine `sandbox` names. The same name, version and key as
    ADVERSARIAL: both give the same rows."""
    return replace(ADVERSARIAL, run=partial(run_adversarial, client=client, sandbox=sandbox))
