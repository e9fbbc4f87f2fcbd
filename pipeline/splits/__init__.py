"""Contamination-free splits: near-duplicate clusters, benchmark decontamination, split assignment.

Entry points: `pipeline.splits.stage.SPLITS` (the stage value; `split_problems` wraps it) and the
`aletheia problems split` command (pipeline/splits/cli.py).
"""
