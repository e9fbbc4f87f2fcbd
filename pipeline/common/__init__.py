"""Small helpers every stage uses: deterministic Parquet I/O, content hashing, stage caching."""
