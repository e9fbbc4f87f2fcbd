"""Contamination-free splits: near-duplicate clusters, benchmark decontamination, split assignment.

Entry points: `pipeline.splits.stage.split_problems` (the stage function) and the
`aletheia problems split` command (pipeline/splits/cli.py).
"""
