"""Problem ingestion: source adapters -> validated `Problem` rows + a quarantine table.

Entry points: `pipeline.problems.stage.INGEST` (the stage value; `ingest` wraps it) and
`pipeline.problems.cli.register` (the `aletheia problems ...` commands).
"""
