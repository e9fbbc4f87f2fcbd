"""Problem ingestion: source adapters -> validated `Problem` rows + a quarantine table.

Entry points: `pipeline.problems.stage.ingest` (the stage function) and
`pipeline.problems.cli.register` (the `aletheia problems ...` commands).
"""
