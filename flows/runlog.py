"""Reading a flow run's log (a Prefect worker's log file): its first error, in two lines.

`scripts/demo.sh` calls this when a deployment run fails, so the terminal says why and
where the whole log is instead of only "Failed":

    .venv/bin/python -m flows.runlog first-error .cache/prefect/worker.log

The hook for a richer explanation (a suggestion per known mistake) is `explain(error)`:
it returns the lines printed under the error; today the error itself.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

# "17:23:28.612 | ERROR   | Task run 'judge-shard-0' - Task run failed with exception: ..."
_RECORD = re.compile(
    r"^\d\d:\d\d:\d\d(?:\.\d+)? \| (?P<level>[A-Z]+) +\| (?P<where>.*?) - (?P<msg>.*)$"
)


@dataclass(frozen=True)
class FirstError:
    where: str  # "Task run 'judge-shard-0'"
    message: str  # the log record's message, first line
    exception: str | None  # the traceback's last line: "ValueError: ..."
    line_number: int  # 1-based, in the log


def first_error(text: str) -> FirstError | None:
    """The first ERROR (or CRITICAL) record of a Prefect log, with its exception line."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _RECORD.match(line)
        if not m or m["level"] not in ("ERROR", "CRITICAL"):
            continue
        exception = None
        for follow in lines[i + 1 :]:  # the traceback, until the next record
            if _RECORD.match(follow):
                break
            if follow.strip() and not follow.startswith((" ", "\t", "Traceback")):
                exception = follow.strip()  # the last unindented line: "Type: message"
        return FirstError(m["where"], m["msg"].strip(), exception, i + 1)
    return None


def explain(error: FirstError) -> list[str]:
    """What to print about the error (hook: a suggestion for known mistakes goes here)."""
    out = [f"first error ({error.where}): {error.message[:500]}"]
    if error.exception and error.exception not in error.message:
        out.append(f"  {error.exception[:500]}")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "first-error":
        print("usage: python -m flows.runlog first-error <log file>", file=sys.stderr)
        return 2
    path = Path(argv[1])
    text = path.read_text(errors="replace") if path.exists() else ""
    error = first_error(text)
    if error is None:
        print(f"no error record in {path}")
    else:
        print("\n".join(explain(error)))
        print(f"full log: {path.resolve()} (line {error.line_number})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
