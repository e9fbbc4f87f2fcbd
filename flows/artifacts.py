"""What a user sees in the Prefect UI and the log: progress per long stage, what each finished
node shows (fingerprints, counts tables: its stage's `shows`), the build's summary."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any
from uuid import UUID

from prefect import get_run_logger
from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    create_table_artifact,
    update_progress_artifact,
)


def artifact_key(*parts: str) -> str:
    """Prefect artifact keys: lowercase letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9-]+", "-", "-".join(p for p in parts if p).lower()).strip("-")


class Progress:
    """A progress artifact for one long stage: moved by the stage's own progress (`set`,
    from flows.progress.StageWatch, every few seconds of work) and as its shards finish
    (`advance`). It only moves forward, whichever of the two is ahead."""

    def __init__(self, key: str, total: int, description: str):
        self.total, self.done, self.description = max(total, 1), 0, description
        self.value = 0.0
        self._lock = threading.Lock()
        self.id: UUID = create_progress_artifact(0.0, key=key, description=description)

    def set(self, percent: float, note: str = "") -> None:
        """The stage's progress inside its shards (`note`: "312/840 programs, ETA 1m41s")."""
        with self._lock:
            if percent <= self.value:
                return
            self.value = min(100.0, percent)
            shards = f"{self.done}/{self.total} shard(s) done"
            desc = f"{self.description}: {note}; {shards}" if note else f"{self.description}"
            update_progress_artifact(self.id, self.value, description=desc)

    def advance(self, n: int = 1, note: str = "") -> None:
        with self._lock:
            self.done += n
            desc = f"{self.description}: {self.done}/{self.total} shard(s) done" + (
                f" ({note})" if note else ""
            )
            self.value = max(self.value, min(100.0, 100.0 * self.done / self.total))
            update_progress_artifact(self.id, self.value, description=desc)


FINGERPRINTS = "fingerprints.json"


class Showing:
    """What a build shows of its finished nodes, gathered as they finish: each Parquet
    output's fingerprint (`[fingerprint] judge judged: 1234 rows 3f2a...`) and what the
    node's stage adds (`Stage.shows`: log lines, table artifacts, fingerprint entries of its
    own, a part of the build's summary). `finish` writes the fingerprints file (two users
    compare theirs line by line to see where their builds parted) and the summary."""

    def __init__(self) -> None:
        self.prints: list[dict[str, Any]] = []
        self.summary: list[str] = []

    def add(self, node: Any, cfg: Any, calls: list[Any], result: Any, inputs: Any) -> None:
        """A finished node: `result` is its task's (a list of them for a node of several
        runs), `calls` what its runs were given, `inputs` its resolved paths."""
        from pipeline.common.stage import Finished

        logger = get_run_logger()
        runs = result if isinstance(result, list) else [result]
        prefix = "" if node.name == node.stage.name else node.name  # the judge's: `judged-counts`
        for call, made in zip(calls, runs, strict=True):
            entries = [
                {"stage": node.name, "output": name, **fp, "file": made["outputs"][name]}
                for name, fp in (made.get("fingerprints") or {}).items()
            ]
            if node.stage.shows is not None:
                done = Finished(call, inputs, made["outputs"], made["stats"])
                shown = node.stage.shows(done)
                for e in entries:
                    e.update(shown.notes.get(e["output"], {}))
                entries += [dict(p) for p in shown.prints]
                for line in shown.lines:
                    logger.info("%s: %s", node.name, line)
                for key, (description, rows) in shown.tables.items():
                    counts_artifact(
                        artifact_key(cfg.name, prefix, key), rows, f"{node.name}: {description}"
                    )
                if shown.summary:
                    self.summary.append(shown.summary)
            for e in entries:
                rows = "" if e["rows"] is None else f"{e['rows']} rows "
                logger.info("[fingerprint] %s %s: %s%s", e["stage"], e["output"], rows, e["hash"])
            self.prints += entries

    def finish(self, cfg: Any, *, record: bool) -> None:
        """The build's summary artifact (when a node gave it a part: publish) and, `record`
        (a whole build), `<work>/fingerprints.json`, paths relative to the work dir so two
        machines' files compare as text."""
        work = cfg.work_dir.resolve()
        for e in self.prints:
            if e.get("file") and Path(e["file"]).resolve().is_relative_to(work):
                e["file"] = Path(e["file"]).resolve().relative_to(work).as_posix()
        if record:
            (work / FINGERPRINTS).write_text(json.dumps(self.prints, indent=1) + "\n")
        if self.summary:
            create_markdown_artifact(
                self.markdown(cfg),
                key=artifact_key(cfg.name, "summary"),
                description="Where the dataset is, counts, invariant checks",
            )

    def markdown(self, cfg: Any) -> str:
        lines = [
            f"# Aletheia build `{cfg.build_id}`",
            "",
            f"- intermediate tables: `{cfg.work_dir.resolve()}`",
            f"- run config: `{cfg.name}`, seed {cfg.seed}",
            *self.summary,
            "",
            "## Fingerprints",
            "",
            (
                "Rows and a content hash per stage output (measured columns such as per-test "
                "times left out). Compare with another build line by line: the first line that "
                "differs is the stage where the two parted."
            ),
            "",
            "| stage | output | rows | fingerprint |",
            "| --- | --- | ---: | --- |",
        ]
        for e in self.prints:
            rows = "-" if e.get("rows") is None else str(e["rows"])
            lines.append(f"| {e['stage']} | {e['output']} | {rows} | `{e['hash']}` |")
        return "\n".join(lines) + "\n"


def counts_artifact(key: str, rows: list[dict[str, Any]], description: str) -> None:
    create_table_artifact(rows or [{"note": "no rows"}], key=key, description=description)
