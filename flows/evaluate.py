"""The evaluation after publish: the build graph's `evaluate` node (pipeline/evaluate/stage.py
EVALUATE), the run config's `evaluate:` section's model scored on the published folder's
evaluation configs, run by the same Prefect executor as every node (`evaluate_published`
in flows/build.py, beside `run_node`, so the two modules import one way only). It changes
no published row: the report goes under `cfg.eval_dir`, outside the hub folder."""

from flows.build import evaluate_published

__all__ = ["evaluate_published"]
