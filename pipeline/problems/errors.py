"""Errors an adapter raises: one row is bad (quarantine it) or a whole source is bad (stop)."""

from __future__ import annotations


class RowError(ValueError):
    """One source row cannot become a Problem; it goes to quarantine with `field` and `reason`."""

    def __init__(self, field: str | None, reason: str) -> None:
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field = field
        self.reason = reason


class SourceError(RuntimeError):
    """A whole source cannot be read (missing column, unreadable files): names source and field."""

    def __init__(self, source: str, reason: str, field: str | None = None) -> None:
        where = f"source {source!r}" + (f", field {field!r}" if field else "")
        super().__init__(f"{where}: {reason}")
        self.source = source
        self.field = field
        self.reason = reason
