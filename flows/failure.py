"""A failed flow run's first error, in one line, and where its full log is.

`prefect deployment run ... --watch` ends a failed run with only "Failed"; the reason is
in the worker's log, among heartbeats and the tracebacks that follow from the first
error. This reads that log (the worker streams every flow run's output into it) and
prints the first error: the task or flow that raised it and the exception, with the line
the full traceback starts on.

    python -m flows.failure --log .cache/prefect/worker.log --ui http://127.0.0.1:4200

scripts/demo.sh calls it when the demo's run fails. Prefect's console lines read
`HH:MM:SS.mmm | LEVEL   | <logger> - <message>`; a traceback follows its record.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

RECORD = re.compile(r"^\d\d:\d\d:\d\d(?:\.\d+)? \| (?P<level>[A-Z]+)\s*\| (?P<rest>.*)$")
RUN = re.compile(r"^(?P<who>(?:Task|Flow) run '[^']+') - (?P<message>.*)$")
EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*)(?:Error|Exception|Interrupt|Exit|Failure|Crash)\b.*")
# A Prefect line that follows an error rather than being one.
ECHOES = ("Finished in state", "Process for flow run", "Reported flow run")


@dataclass(frozen=True)
class FirstError:
    line: int  # 1-based line of the log where the error's record starts
    who: str  # "Task run 'judge-shard-ee2'", "Flow run 'urban-gerbil'", or "" (unknown)
    what: str  # the exception line, or the record's message

    def one_line(self) -> str:
        return f"{self.who}: {self.what}" if self.who else self.what


def _exception_after(lines: list[str], start: int) -> str | None:
    """The first exception line of the traceback that begins at or after `start`: in a
    chain ("The above exception was the direct cause of ...") that is the root cause, which
    Prefect's wrappers (StepExecutionError, a Failed state) only repeat or hide."""
    i = start
    while i < len(lines) and not lines[i].startswith("Traceback (most recent call last)"):
        if RECORD.match(lines[i]) and i > start:
            return None  # the next record came first: no traceback for this one
        i += 1
    for line in lines[i + 1 :]:
        if RECORD.match(line):
            break
        if EXCEPTION.match(line):
            return line.strip()
    return None


def first_error(text: str) -> FirstError | None:
    """The first ERROR (or CRITICAL) record of a Prefect log, with its exception."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = RECORD.match(line)
        if not m or m["level"] not in {"ERROR", "CRITICAL"}:
            continue
        rest = m["rest"].split(" | ", 1)[-1] if " | " in m["rest"] else m["rest"]
        run = RUN.match(rest)
        who, message = (run["who"], run["message"]) if run else ("", rest)
        if any(message.startswith(e) for e in ECHOES):
            continue
        what = _exception_after(lines, i) or " ".join(message.split())
        return FirstError(i + 1, who, what[:500])
    for i, line in enumerate(lines):  # no Prefect record: a bare traceback (a crash at start)
        if line.startswith("Traceback (most recent call last)"):
            what = _exception_after(lines, i)
            if what:
                return FirstError(i + 1, "", what[:500])
    return None


def report(log: Path, ui: str | None = None) -> str:
    """The lines to print for a failed run whose output went to `log`."""
    where = f"full log: {log}"
    try:
        found = first_error(log.read_text(errors="replace"))
    except OSError as e:
        return f"the run failed; its log {log} cannot be read ({e.strerror or e})"
    ui_line = f"\nflow runs and their logs in the UI: {ui.rstrip('/')}/runs" if ui else ""
    if found is None:
        return f"the run failed, with no error record in its log; {where}{ui_line}"
    return f"first error: {found.one_line()}\n{where} (from line {found.line}){ui_line}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", type=Path, required=True, help="the worker's log file")
    parser.add_argument("--ui", help="the Prefect UI's address, e.g. http://127.0.0.1:4200")
    args = parser.parse_args(argv)
    print(report(args.log, args.ui), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
