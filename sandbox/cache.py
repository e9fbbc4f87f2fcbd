"""Host-side verdict cache: SQLite keyed by JudgeRequest.cache_key (source, tests, limits, compare, image).

Safe for several threads and several processes (WAL, busy timeout). SE results are never stored.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from sandbox.models import JudgeResult


class VerdictCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            str(self.path), timeout=60, check_same_thread=False, isolation_level=None
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, result TEXT NOT NULL, created REAL NOT NULL)"
        )

    def get(self, key: str) -> JudgeResult | None:
        with self._lock:
            row = self._db.execute("SELECT result FROM verdicts WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return JudgeResult.model_validate_json(row[0]).model_copy(update={"cached": True})

    def put(self, key: str, result: JudgeResult) -> None:
        if result.verdict == "SE" or any(t.verdict == "SE" for t in result.tests):
            return  # a sandbox failure is not an answer: judge it again next time
        blob = result.model_copy(update={"cached": False}).model_dump_json()
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO verdicts (key, result, created) VALUES (?, ?, ?)",
                (key, blob, time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
