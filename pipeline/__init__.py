"""The Aletheia pipeline: stages as plain typed functions (Parquet in, Parquet out)."""

__version__ = "0.1.0"
