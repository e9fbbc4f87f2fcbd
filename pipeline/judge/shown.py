"""What a build shows of a finished judge run (`JUDGE.shows`): the judged candidates counted
per model / tier / language / verdict (a table in the Prefect UI), and how many verdicts
are timing-sensitive (docs: "The same rows on every machine"), added to the judged
table's fingerprint entry and said in the log."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.common.stage import Finished, Shown


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


def judge_shown(done: Finished) -> Shown:
    """The counts table, and the timing note on the judged table's fingerprint."""
    judged = Path(done.outputs["judged"])
    t = timing_sensitivity(judged)
    line = (
        f"timing: {t['programs_near_time_limit']} program(s) used >= half "
        "their time limit on a test (a slower CPU may judge them otherwise); "
        f"{t['tests_stopped_by_wall_clock']} test(s) stopped by the wall-clock cap before "
        f"their CPU limit (this machine was busy: load {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count() or 0} cores)"
    )
    about = (
        "Judged candidates per model / tier / language / verdict, and the problems the judge "
        "quarantined"
    )
    counts = judged_counts(judged, Path(done.outputs["quarantine"]))
    return Shown(lines=(line,), tables={"judged-counts": (about, counts)}, notes={"judged": t})
