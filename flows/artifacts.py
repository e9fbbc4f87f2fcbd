"""What a user sees in the Prefect UI: progress per long stage, counts tables, a summary."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Any
from uuid import UUID

import polars as pl
from prefect import get_run_logger
from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    create_table_artifact,
    update_progress_artifact,
)

from pipeline.common.fingerprint import table_fingerprint
from pipeline.common.hub_folder import split_files
from pipeline.publish.card import policy_note, verdict_mix_table
from schemas.dataset_configs import CONFIG_BY_NAME


def artifact_key(*parts: str) -> str:
    """Prefect artifact keys: lowercase letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9-]+", "-", "-".join(parts).lower()).strip("-")


class Progress:
    """A progress artifact for one long stage: moved by the stage's own progress (`set`,
    from flows.progress.StageWatch, every few seconds of work) and as its shards finish
    (`advance`). It only moves forward, whichever of the two is ahead."""

    def __init__(self, key: str, total: int, description: str):
        self.total, self.done, self.description = max(total, 1), 0, description
        self.value = 0.0
        self._lock = threading.Lock()
        self.id: UUID = create_progress_artifact(0.0, key=key, description=description)

    def set(self, percent: float, note: str = "") -> None:
        """The stage's progress inside its shards (`note`: "312/840 programs, ETA 1m41s")."""
        with self._lock:
            if percent <= self.value:
                return
            self.value = min(100.0, percent)
            shards = f"{self.done}/{self.total} shard(s) done"
            desc = f"{self.description}: {note}; {shards}" if note else f"{self.description}"
            update_progress_artifact(self.id, self.value, description=desc)

    def advance(self, n: int = 1, note: str = "") -> None:
        with self._lock:
            self.done += n
            desc = f"{self.description}: {self.done}/{self.total} shard(s) done" + (
                f" ({note})" if note else ""
            )
            self.value = max(self.value, min(100.0, 100.0 * self.done / self.total))
            update_progress_artifact(self.id, self.value, description=desc)


def judged_counts(judged: Path, quarantine: Path | None = None) -> list[dict[str, Any]]:
    """Candidates per generator / language / verdict from the judged table; with
    `quarantine` (the judge's merged quarantine file, absent when empty) one more row:
    how many problems the judge quarantined (their candidates are not judged at all)."""
    df = pl.read_parquet(judged, columns=["generator", "tier", "language", "verdict"])
    out = (
        df.group_by(["generator", "tier", "language", "verdict"])
        .len()
        .sort(["generator", "tier", "language", "verdict"])
    )
    extra = []
    if quarantine is not None:
        n = pl.read_parquet(quarantine, columns=["reason"]).height if quarantine.exists() else 0
        extra.append(
            {
                "split": "judge quarantine",
                "language": "-",
                "model": "-",
                "tier": "-",
                "verdict": "problems quarantined",
                "count": n,
            }
        )
    return [
        {
            "split": "judged",
            "language": r["language"],
            "model": r["generator"],
            "tier": r["tier"],
            "verdict": r["verdict"],
            "count": r["len"],
        }
        for r in out.iter_rows(named=True)
    ] + extra


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


def rejected_edits(stats: dict[str, Any]) -> list[dict[str, Any]]:
    """Per bias type: edits planned, accepted and rejected by the re-judge (and why), from
    the adversarial stage's stats (`by_bias`); `planned` counts row copies (per_row) or
    edits (per_candidate), the rest count edits, `copies_rejected_by_rejudge` row copies."""
    return [
        {"bias": bias, **{c: int(counts.get(c, 0)) for c in REJUDGE_COLUMNS}}
        for bias, counts in sorted(stats.get("by_bias", {}).items())
    ]


def _main_split_files(hub_dir: Path, name: str) -> list[Path]:
    """A config's shards of its `train` split, or of an evaluation set's `full` split
    (its `test` split is a sample of it: counted once)."""
    split = "train" if CONFIG_BY_NAME[name].side == "train" else "full"
    return split_files(hub_dir, name, split)


def dataset_counts(hub_dir: Path) -> list[dict[str, Any]]:
    """Candidates per config (split) / language / model / verdict in the published folder
    (evaluation configs: their `full` split)."""
    rows: list[dict[str, Any]] = []
    for name, cfg in CONFIG_BY_NAME.items():
        files = _main_split_files(hub_dir, name)
        if not files:
            continue
        if cfg.kind == "questions":
            n = sum(pl.read_parquet(f, columns=["problem_id"]).height for f in files)
            rows.append(
                {
                    "split": name,
                    "language": "-",
                    "model": "-",
                    "tier": "-",
                    "verdict": "-",
                    "count": n,
                }
            )
            continue
        cols = ["candidate_languages", "candidate_generators", "verdicts", "weak_strong"]
        df = pl.concat([pl.read_parquet(f, columns=cols) for f in files])
        exploded = df.explode(["candidate_languages", "candidate_generators", "verdicts"])
        grouped = exploded.group_by(
            ["candidate_languages", "candidate_generators", "weak_strong", "verdicts"]
        ).len()
        for r in grouped.sort(
            ["candidate_languages", "candidate_generators", "verdicts"]
        ).iter_rows(named=True):
            rows.append(
                {
                    "split": name,
                    "language": r["candidate_languages"],
                    "model": r["candidate_generators"],
                    "tier": r["weak_strong"],
                    "verdict": r["verdicts"],
                    "count": r["len"],
                }
            )
    return rows


def published_tables(hub_dir: Path) -> dict[str, Any]:
    """Each published config of the Hub folder as one Arrow table (configs without shards left out)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = {}
    for name in CONFIG_BY_NAME:
        files = _main_split_files(hub_dir, name)
        if files:
            out[name] = pa.concat_tables([pq.read_table(f) for f in files])
    return out


def timing_sensitivity(judged: Path, near: float = 0.5) -> dict[str, int]:
    """How many of a judged table's verdicts another machine could see otherwise: distinct
    programs with a test that used at least `near` of its CPU time limit (a slower or
    busier CPU may cross the limit), and tests stopped by the sandbox's wall-clock cap
    before they used their CPU limit (the machine was too busy to run them: a TLE that a
    quiet machine would not give)."""
    cols = ["judge_cache_key", "test_verdicts", "test_times_s", "time_limit_s"]
    df = pl.read_parquet(judged, columns=cols).unique("judge_cache_key")
    if df.height == 0:
        return {"programs_near_time_limit": 0, "tests_stopped_by_wall_clock": 0}
    tests = df.explode(["test_verdicts", "test_times_s"]).drop_nulls("test_times_s")
    close = tests.filter(pl.col("test_times_s") >= near * pl.col("time_limit_s"))
    walled = tests.filter(
        (pl.col("test_verdicts") == "TLE") & (pl.col("test_times_s") < pl.col("time_limit_s"))
    )
    return {
        "programs_near_time_limit": close["judge_cache_key"].n_unique(),
        "tests_stopped_by_wall_clock": walled.height,
    }


def config_fingerprints(hub_dir: Path) -> dict[str, dict[str, Any]]:
    """Rows and content hash of each published split (its shards in order, as one table):
    `<config>` for its whole table (`train`, or an evaluation set's `full`), `<config>/test`
    for an evaluation set's `test` split."""
    import hashlib

    out = {}
    for name, cfg in CONFIG_BY_NAME.items():
        for split in cfg.splits:
            files = split_files(hub_dir, name, split)
            if not files:
                continue
            parts = [table_fingerprint(f) for f in files]
            digest = parts[0]["hash"]  # one shard: its own fingerprint
            if len(parts) > 1:
                joined = "".join(p["hash"] for p in parts)
                digest = hashlib.sha256(joined.encode()).hexdigest()[:12]
            key = f"{name}/{split}" if split == "test" else name
            out[key] = {"rows": sum(p["rows"] for p in parts), "hash": digest}
    return out


def fingerprint_section(work_dir: Path, hub_dir: Path) -> list[str]:
    """The build summary's fingerprints: every stage's outputs (the build's
    fingerprints.json), then every published config. Two builds that agree on a line
    hold the same rows there; the first line that differs is where they parted."""
    import json

    lines = [
        "## Fingerprints",
        "",
        (
            "Rows and a content hash per stage output (measured columns such as per-test times "
            "left out). Compare with another build line by line: the first line that differs is "
            "the stage where the two parted."
        ),
        "",
        "| stage | output | rows | fingerprint |",
        "| --- | --- | ---: | --- |",
    ]
    path = work_dir / "fingerprints.json"
    stages = json.loads(path.read_text()) if path.exists() else []
    for e in stages:
        rows = "-" if e.get("rows") is None else str(e["rows"])
        lines.append(f"| {e['stage']} | {e['output']} | {rows} | `{e['hash']}` |")
    for name, fp in config_fingerprints(hub_dir).items():
        lines.append(f"| published | {name} | {fp['rows']} | `{fp['hash']}` |")
    return lines


def counts_artifact(key: str, rows: list[dict[str, Any]], description: str) -> None:
    create_table_artifact(rows or [{"note": "no rows"}], key=key, description=description)


def summary_artifact(
    key: str, cfg: Any, publish: dict[str, Any], push: dict[str, Any] | None
) -> str:
    stats = publish["stats"]
    lines = [
        f"# Aletheia build `{stats.get('build_id')}`",
        "",
        f"- dataset folder (laid out as pushed): `{Path(stats['hub_dir']).resolve()}`",
        f"- intermediate tables: `{cfg.work_dir.resolve()}`",
        f"- run config: `{cfg.name}`, seed {cfg.seed}",
    ]
    if push:
        what = f"commit `{push['commit']}`" if push.get("commit") else "no change (no new commit)"
        lines.append(f"- pushed to `{push['repo_id']}`: {what}, tag `{push['tag']}`")
    else:
        lines.append("- not pushed (set `hub.push: true` and `hub.repo_id` to release to the Hub)")
    lines += ["", "| config | rows per split | shards |", "| --- | --- | ---: |"]
    for name, n in stats["rows"].items():
        per_split = stats.get("split_rows", {}).get(name, {})
        rows = " / ".join(f"{s} {k}" for s, k in per_split.items()) or str(n)
        lines.append(f"| {name} | {rows} | {stats['shards'].get(name, '-')} |")
    lines += [
        "",
        "## Invariant checks",
        "",
        "| check | invariant | rows | result |",
        "| --- | --- | ---: | --- |",
    ]
    for c in stats["checks"]:
        lines.append(
            f"| {c['name']} | {c['invariant']} | {c['rows']} | {'pass' if c['passed'] else 'FAIL'} |"
        )
    lines += ["", *fingerprint_section(cfg.work_dir, Path(stats["hub_dir"]))]
    lines += ["", "## Candidates by model and verdict", ""]
    note = policy_note(cfg.model_dump(mode="json"))
    lines += [note] if note else []
    lines.append(verdict_mix_table(published_tables(Path(stats["hub_dir"]))))
    md = "\n".join(lines) + "\n"
    create_markdown_artifact(
        md, key=key, description="Where the dataset is, counts, invariant checks"
    )
    return md


# --- fingerprint lines: where two builds part ------------------------------------------------

FINGERPRINTS = "fingerprints.json"


def fingerprint_lines(label: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    """Log a stage's output fingerprints (`[fingerprint] judge judged: 1234 rows 3f2a...`)
    and return them as entries of the build summary (`<work>/fingerprints.json`)."""
    logger = get_run_logger()
    out = []
    for name, fp in (result.get("fingerprints") or {}).items():
        logger.info("[fingerprint] %s %s: %d rows %s", label, name, fp["rows"], fp["hash"])
        out.append({"stage": label, "output": name, **fp, "file": result["outputs"][name]})
    return out


def timing_note(judged: Path, prints: list[dict[str, Any]]) -> None:
    """Say how many verdicts are timing-sensitive (docs: "The same rows on every machine"):
    the part of a build another machine may judge otherwise."""
    t = timing_sensitivity(judged)
    get_run_logger().info(
        "[fingerprint] judge timing: %d program(s) used >= half their time limit on a test "
        "(a slower CPU may judge them otherwise); %d test(s) stopped by the wall-clock cap "
        "before their CPU limit (this machine was busy: load %.1f on %d cores)",
        t["programs_near_time_limit"],
        t["tests_stopped_by_wall_clock"],
        os.getloadavg()[0],
        os.cpu_count() or 0,
    )
    for e in prints:
        if e["stage"] == "judge" and e["output"] == "judged":
            e.update(t)


def weights_line(label: str, digest: str | None, what: str = "weights") -> list[dict[str, Any]]:
    """A model's fingerprint: the hash of its weights file (None: nothing to show)."""
    if not digest:
        return []
    get_run_logger().info("[fingerprint] %s %s: %s", label, what, digest)
    return [{"stage": label, "output": what, "rows": None, "hash": digest}]
