"""Best-of-N as a stage value: BEST_OF_N, run by the one runner (pipeline/common/runner.py), as
`aletheia best-of-n` and the `best-of-n` flow run it.

Its call is the `BestOfNConfig` (keyed without `progress` and the sandbox settings that change
no verdict); its inputs the problems file, the samples (a policy evaluation's samples.parquet
or a JSONL / Parquet of programs) and the verifier folder's files (a Hub id or a served name
has none: its name is in the call); its output the report folder, with the marker
`_stage.json` inside. So the same samples, verifier and settings again execute nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.bestofn.config import BestOfNConfig
from pipeline.common.prepared import run_prepared
from pipeline.common.progress import progress_file
from pipeline.common.runner import StageResult
from pipeline.common.stage import Keying, ShardContext, Stage, Stats
from pipeline.model_refs import model_files

STAGE = "best-of-n"
VERSION = "1"

KEY_EXCLUDE: dict[str, Any] = {
    "progress": True,
    "sandbox": {"pool_size", "token_file", "token_env"},
}


def samples_file(samples: Path) -> Path:
    """The file a samples input names: a policy evaluation folder's samples.parquet."""
    from pipeline.bestofn.samples import POLICY_SAMPLES

    return samples / POLICY_SAMPLES if samples.is_dir() else samples


def _outputs(config: BestOfNConfig, out: Path) -> dict[str, Path]:
    from pipeline.bestofn.run import PROBLEMS_FILE, RESPONSES_FILE

    return {
        "report": out / "report.json",
        "markdown": out / "report.md",
        "per_problem": out / PROBLEMS_FILE,
        "responses": out / RESPONSES_FILE,
    }


def _run(ctx: ShardContext[BestOfNConfig]) -> Stats:
    import json

    from pipeline.bestofn.run import best_of_n  # torch: only when it runs

    problems, samples = ctx.inputs["problems"], ctx.inputs["samples"]
    assert isinstance(problems, Path) and isinstance(samples, Path), "one file each"
    report = best_of_n(ctx.config, problems, samples, ctx.out)
    return json.loads(json.dumps(report, default=str))


BEST_OF_N: Stage[BestOfNConfig] = Stage(
    name=STAGE,
    version=VERSION,
    config=BestOfNConfig,
    inputs=("problems", "samples", "verifier"),
    outputs=_outputs,
    run=_run,
    key=Keying(KEY_EXCLUDE),
    models="local",
    reports=lambda call, out: progress_file(out),
    tags=("gpu",),
)


def best_of_n_inputs(
    config: BestOfNConfig, problems: Path, samples: Path
) -> dict[str, Path | list[Path]]:
    """BEST_OF_N's named inputs: the problems file, the samples file, the verifier's files."""
    return {
        "problems": Path(problems),
        "samples": samples_file(Path(samples)),
        "verifier": model_files(config.verifier),
    }


def run_best_of_n(
    config: BestOfNConfig, problems: Path, samples: Path, out_dir: Path, *, force: bool = False
) -> StageResult:
    """Best-of-N into `out_dir` through the one way into a stage (`pipeline.common.prepared`),
    or reuse it: the marker matched."""
    inputs = best_of_n_inputs(config, problems, samples)
    return run_prepared(BEST_OF_N, config, inputs, Path(out_dir), force=force)
