"""Stage entry points: Parquet in, Parquet out, a stats dict back (the flows wire these).

ASSEMBLE here, ADVERSARIAL_EDITS and ADVERSARIAL in `pipeline.instances.adversarial.stage`:
stage values that `pipeline.common.runner.run_stage` keys, caches and marks
(a folder whose `_stage.json` holds the key, with every output present, is reused
untouched). `assemble`, `adversarial_edits` and `adversarial` are the entry points the
`aletheia` commands and the tests call, thin wrappers over `run_stage` (the flows run the
stage values through flows/task.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa

from pipeline.common.config import RunnerSection
from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.runner import run_stage
from pipeline.common.stage import CheckContext, Finding, ShardContext, Stage, Stats
from pipeline.instances.adversarial.config import AdversarialConfig
from pipeline.instances.assemble import (
    CANDIDATE_COLUMNS,
    PROBLEM_COLUMNS,
    AssemblyInputError,
    assemble_frames,
    empty_assembly,
    problems_not_in_train,
)
from pipeline.instances.checks import disjoint_problem_violations, instance_violations, require
from pipeline.instances.config import AssembleConfig, test_table_name
from pipeline.instances.dpo.config import DPOConfig
from pipeline.instances.prompt_checks import check_assemble
from pipeline.instances.stats_file import STATS_FILE, write_stats
from pipeline.instances.tokens import (
    TokenizerUnavailable,
    check_tokenizer,
    measures_caps,
    tokenizer_problem,
)
from schemas.common import QUARANTINE_SCHEMA
from schemas.instance import INSTANCE_SCHEMA
from schemas.problem import TRAIN_QUESTIONS_SCHEMA

if TYPE_CHECKING:
    from pipeline.judge.config import SandboxSection
    from sandbox.engines import JudgeEngine

ASSEMBLE_VERSION = "3"  # 2: Aletheia selection, token caps; 3: listwise eval sets + test splits
ASSIGNMENTS_FILE = "assignments.parquet"
TRAIN_QUESTIONS_FILE = "train_questions.parquet"
QUARANTINE_FILE = "quarantine.parquet"


# ---------------------------------------------------------------------- assemble
def split_tables(splits_dir: Path, *, train_questions: bool = False) -> list[Path]:
    """The split tables assembly reads from a splits folder: the assignments, or (a folder
    without them) the train and held-out problem tables, whose rows take their file's split.
    `train_questions`: Train-Questions too (`eval_problems: not_in_train`, whose assembly
    keeps in it only the problems on Train's side)."""
    splits_dir = Path(splits_dir)
    if (splits_dir / ASSIGNMENTS_FILE).exists():
        extra = [splits_dir / TRAIN_QUESTIONS_FILE] if train_questions else []
        return [splits_dir / ASSIGNMENTS_FILE, *extra]
    tables = [splits_dir / f"{split}.parquet" for split in ("train", "heldout")]
    for p in tables:
        if not p.exists():
            raise FileNotFoundError(f"{splits_dir}: neither {ASSIGNMENTS_FILE} nor {p.name}")
    return tables


def _assignments(tables: list[Path]) -> pl.DataFrame:
    """Problem -> split, from the assignments table or from train/heldout.parquet."""
    parts = []
    for p in tables:
        if p.name == TRAIN_QUESTIONS_FILE:
            continue
        if p.name == ASSIGNMENTS_FILE:  # with its clusters (eval_problems: not_in_train)
            parts.append(pl.read_parquet(p, columns=["problem_id", "cluster_id", "split"]))
        else:
            frame = pl.read_parquet(p, columns=["problem_id"])
            parts.append(frame.with_columns(split=pl.lit(p.stem)))
    return pl.concat(parts)


def assemble_outputs(config: AssembleConfig, out: Path) -> dict[str, Path]:
    """One table per split, `<split>.test` beside each evaluation split, the quarantine
    and stats.json."""
    files = {s.name: out / f"{s.name}.parquet" for s in config.splits}
    for s in config.splits:
        if s.has_test_split:
            files[test_table_name(s.name)] = out / f"{test_table_name(s.name)}.parquet"
    if config.eval_problems == "not_in_train":  # Train-Questions less the eval pool
        files["train_questions"] = out / TRAIN_QUESTIONS_FILE
    return {**files, "quarantine": out / QUARANTINE_FILE, "stats": out / STATS_FILE}


def run_assemble(ctx: ShardContext[AssembleConfig]) -> Stats:
    """Write `<split>.parquet` (INSTANCE_SCHEMA) per configured split (an evaluation split's
    `test` split beside it as `<split>.test.parquet`), quarantine.parquet, stats.json."""
    config = ctx.config
    if config.require_tokenizer and measures_caps(config):
        # A tokenizer that cannot be had: one line before any table is read.
        problem = tokenizer_problem(config.tokenizer)
        if problem is not None:
            raise TokenizerUnavailable(problem)
    judged, problems = Path(ctx.inputs["judged"]), Path(ctx.inputs["problems"])
    splits = ctx.inputs["splits"]
    split_files = [Path(splits)] if isinstance(splits, (str, Path)) else list(splits)
    try:
        judged_df = pl.read_parquet(judged, columns=CANDIDATE_COLUMNS)
        problems_df = pl.read_parquet(problems, columns=PROBLEM_COLUMNS)
    except pl.exceptions.ColumnNotFoundError as e:
        raise AssemblyInputError(f"{judged.name} / {problems.name}: {e}") from e
    assignments = _assignments(split_files)
    tables, quarantine, stats = assemble_frames(judged_df, problems_df, assignments, config)
    if (nothing := empty_assembly(stats, config)) is not None:  # before a file is written
        raise AssemblyInputError(nothing)

    for name, table in tables.items():
        require(instance_violations(table), f"assemble {name}")
    train_names = [s.name for s in config.splits if s.problems == "train"]
    eval_tables = [tables[s.name] for s in config.splits if s.problems == "heldout"]
    for name in train_names:
        require(
            disjoint_problem_violations(tables[name], eval_tables),
            f"assemble {name} vs eval splits",
        )

    for name, table in tables.items():
        write_parquet(table, ctx.out / f"{name}.parquet", INSTANCE_SCHEMA)
    if config.eval_problems == "not_in_train":
        stats["train_questions"] = _train_side_questions(
            split_files, assignments, [tables[n] for n in train_names], ctx.out
        )
    write_parquet(
        pa.Table.from_pylist(quarantine, schema=QUARANTINE_SCHEMA),
        ctx.out / QUARANTINE_FILE,
        QUARANTINE_SCHEMA,
    )
    stats["outputs"] = {name: f"{name}.parquet" for name in tables}
    write_stats(ctx.out, stats)
    return stats


def _train_side_questions(
    split_files: list[Path], assignments: pl.DataFrame, train: list[pa.Table], out: Path
) -> dict[str, int]:
    """Train-Questions (the split stage's) less every problem of the evaluation pool, so
    it stays on Train's side of the wall (`eval_problems: not_in_train`)."""
    given = [p for p in split_files if p.name == TRAIN_QUESTIONS_FILE]
    if not given:
        raise AssemblyInputError(
            "eval_problems not_in_train: give the splits folder's train_questions.parquet "
            "(split_tables(..., train_questions=True)), to keep the eval pool out of it"
        )
    questions = read_parquet(given[0], TRAIN_QUESTIONS_SCHEMA)
    pool = problems_not_in_train(assignments, train)
    keep = [pid not in pool for pid in questions.column("problem_id").to_pylist()]
    kept = questions.filter(pa.array(keep, pa.bool_()))
    write_parquet(kept, out / TRAIN_QUESTIONS_FILE, TRAIN_QUESTIONS_SCHEMA)
    return {"rows": kept.num_rows, "left_out_in_eval_pool": questions.num_rows - kept.num_rows}


def _check(config: AssembleConfig, ctx: CheckContext) -> list[Finding]:
    """The verifier prompt templates' placeholders, and the tokenizer of the token caps."""
    return check_assemble(config, ctx) + check_tokenizer(config, ctx)


def _plan_line(config: AssembleConfig, runner: RunnerSection) -> str:
    return ", ".join(s.name for s in config.splits)


ASSEMBLE: Stage[AssembleConfig] = Stage(
    name="assemble",
    version=ASSEMBLE_VERSION,
    config=AssembleConfig,
    check=_check,
    inputs=("judged", "problems", "splits"),  # splits: the tables `split_tables` names
    outputs=assemble_outputs,
    run=run_assemble,
    plan=_plan_line,
)


def assemble(
    judged: Path, problems: Path, splits_dir: Path, out_dir: Path, config: AssembleConfig
) -> dict[str, Any]:
    """ASSEMBLE on a splits folder (its assignments): the tables of `assemble_outputs`."""
    inputs = {
        "judged": Path(judged),
        "problems": Path(problems),
        "splits": split_tables(
            Path(splits_dir), train_questions=config.eval_problems == "not_in_train"
        ),
    }
    return run_stage(ASSEMBLE, config, inputs, Path(out_dir)).stats


# ---------------------------------------------------------------------- Adv / Mixed
def adversarial_edits(
    instances: Path, problems: Path, out_dir: Path, config: AdversarialConfig
) -> dict[str, Any]:
    """ADVERSARIAL_EDITS: plan the bias edits (no sandbox) and write the edited programs
    for the judge shards: `<out_dir>/edits.parquet` (CANDIDATE_SCHEMA, one row per distinct
    edited program) and stats.json (edits planned per bias type).

    `adversarial(..., judged_edits=<that file judged>)` re-plans the same edits (same
    config and seed, same plan) and reads their verdicts back.
    """
    from pipeline.instances.adversarial.stage import ADVERSARIAL_EDITS

    inputs = {"instances": Path(instances), "problems": Path(problems)}
    return run_stage(ADVERSARIAL_EDITS, config, inputs, Path(out_dir)).stats


def adversarial(
    instances: Path,
    problems: Path,
    out: Path,
    config: AdversarialConfig,
    client: JudgeEngine | None = None,
    judged_edits: Path | None = None,
    sandbox: SandboxSection | None = None,
) -> dict[str, Any]:
    """ADVERSARIAL (Adv / Mixed): write `<out>/<config.split>.parquet` (INSTANCE_SCHEMA)
    and stats.json.

    `judged_edits`: the judged table (JUDGED_CANDIDATE_SCHEMA) of `adversarial_edits`'
    output, judged by the judge shards; each edit's verdict is read from it by (problem_id,
    candidate_id), and an edit it lacks is counted `not_rejudged`. None: judge the edits
    here, through `client` (a judge engine; None opens the one `sandbox` names, only if there
    is an edit to judge, and closes it afterwards). Both give the same rows.
    """
    from pipeline.instances.adversarial.stage import ADVERSARIAL, judging_here

    inputs: dict[str, Path | list[Path]] = {
        "instances": Path(instances),
        "problems": Path(problems),
        "judged_edits": [Path(judged_edits)] if judged_edits is not None else [],
    }
    stage = ADVERSARIAL if judged_edits is not None else judging_here(client, sandbox)
    return run_stage(stage, config, inputs, Path(out)).stats


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
