"""Progress a stage reports as it works (items done of a total), for whoever listens.

Stages call `track(unit, total)` and `.advance()` as items finish; with no listener this
costs a context-variable lookup and nothing is shown. A flow task installs a listener
(`listening`) around a stage call and turns the ticks into terminal lines and a Prefect
progress artifact (flows/progress.py); the stages never import Prefect.

The listener is a context variable, so it follows the call into the stage (and is not
seen by other tasks running in other threads of the same process).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

# Called with the tracker that moved (its `unit` names what is counted: "programs",
# "requests", "steps"; `done` of `total`). Called from the stage's threads.
Listener = Callable[["Tracker"], None]

_listener: contextvars.ContextVar[Listener | None] = contextvars.ContextVar(
    "aletheia_progress_listener", default=None
)


@dataclass
class Tracker:
    """Counts one unit of work of the current stage; thread-safe (sandbox workers)."""

    unit: str
    total: int
    listener: Listener | None
    done: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._emit()

    def advance(self, n: int = 1) -> None:
        if self.listener is None:
            return
        with self._lock:
            self.done += n
        self._emit()

    def add_total(self, n: int) -> None:
        """More work became known (a stage that discovers its total as it goes)."""
        if self.listener is None:
            return
        with self._lock:
            self.total += n
        self._emit()

    def _emit(self) -> None:
        if self.listener is not None:
            self.listener(self)


def track(unit: str, total: int) -> Tracker:
    """A tracker of `total` items of `unit`, reporting to the current listener (if any)."""
    return Tracker(unit, max(0, int(total)), _listener.get())


def active() -> bool:
    """Whether anyone listens (a stage may skip work that only feeds progress)."""
    return _listener.get() is not None


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Send the progress of whatever runs inside this block (in this context) to `listener`."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


PROGRESS_SUFFIX = ".progress.json"


def progress_file(output: str | Path) -> Path:
    """Where a run writes the progress of the stage producing `output` (a file or folder)."""
    p = Path(output)
    return p / "progress.json" if p.suffix == "" else p.with_name(p.stem + PROGRESS_SUFFIX)
