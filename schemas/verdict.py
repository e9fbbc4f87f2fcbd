"""Verdicts: what the sandbox said of a candidate (docs/architecture.md, "Contracts").

A judged-candidates table is the candidate columns plus VERDICT_FIELDS.
"""

from __future__ import annotations

from enum import StrEnum

import pyarrow as pa

from schemas.candidate import CANDIDATE_FIELDS


class Verdict(StrEnum):
    AC = "AC"  # accepted: every test passed
    WA = "WA"  # wrong answer
    TLE = "TLE"  # time limit exceeded (CPU or wall)
    MLE = "MLE"  # memory limit exceeded
    RE = "RE"  # runtime error (non-zero exit, signal)
    CE = "CE"  # compile error
    OLE = "OLE"  # output limit exceeded
    SE = "SE"  # the sandbox itself failed: never scored as pass or fail


VERDICT_FIELDS: list[pa.Field] = [
    pa.field("verdict", pa.string(), nullable=False),
    pa.field("passed", pa.int32(), nullable=False),
    pa.field("total", pa.int32(), nullable=False),
    pa.field("pass_rate", pa.float64(), nullable=False),
    pa.field("test_verdicts", pa.list_(pa.string()), nullable=False),
    pa.field("test_times_s", pa.list_(pa.float64()), nullable=False),
    pa.field("test_memory_kb", pa.list_(pa.int64()), nullable=False),
    pa.field("compile_output", pa.string()),
    pa.field("sandbox_image", pa.string(), nullable=False),
    pa.field("time_limit_s", pa.float64(), nullable=False),
    pa.field("memory_limit_mb", pa.int32(), nullable=False),
    pa.field("judge_cache_key", pa.string(), nullable=False),
    # The engine that judged the row and what fixes its verdicts (`JudgeEngine.stamp`, e.g.
    # docker:<image id>): one judged table never mixes engines.
    pa.field("judge_stamp", pa.string(), nullable=False),
]
JUDGED_CANDIDATE_SCHEMA = pa.schema(CANDIDATE_FIELDS + VERDICT_FIELDS)
