"""Instances: judged candidates -> Aletheia's Train / Heldout / Strong / Hard, Adv / Mixed, DPO.

Stage entry points (plain functions, Parquet in, Parquet out + a stats dict):
`pipeline.instances.stage.assemble`, `.adversarial`, `.build_dpo`.
"""
