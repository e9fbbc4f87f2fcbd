"""Publishing: the Hub folder (card, size-sharded Parquet per config, plots), invariant
re-checks, and one atomic, idempotent, resumable Hub commit per release."""

from pipeline.publish.checks import CheckConfig, InvariantViolation, run_checks
from pipeline.publish.layout import CONFIG_NAMES, CONFIGS, BuildManifest
from pipeline.publish.push import PushResult, push_folder
from pipeline.publish.stage import PublishConfig, build_hub_folder

__all__ = [
    "CONFIGS",
    "CONFIG_NAMES",
    "BuildManifest",
    "CheckConfig",
    "InvariantViolation",
    "PublishConfig",
    "PushResult",
    "build_hub_folder",
    "push_folder",
    "run_checks",
]
