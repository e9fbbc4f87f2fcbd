"""One compile step for the compiled languages (stdlib only): run the compiler under limits and
turn what happened into (ok, diagnostics). C++, Java and testlib checkers all go through here."""

from __future__ import annotations

DIAGNOSTICS_BYTES = 8000


def compile_step(argv: list[str], cwd: str, run_limited, limits, tool: str) -> tuple[bool, str]:
    """Returns (ok, the compiler's last DIAGNOSTICS_BYTES of output plus why it failed, if it did)."""
    out = run_limited(argv, cwd=cwd, limits=limits, merge_stderr=True)
    text = out.stdout[-DIAGNOSTICS_BYTES:].decode("utf-8", "replace")
    # A compiler killed at its CPU limit shows as a signal with cpu_s at the limit.
    if out.timed_out or ((out.exit_code or 0) < 0 and out.cpu_s >= limits.cpu_s):
        return False, text + "\ncompilation exceeded its time limit"
    if out.output_exceeded:
        return False, text + "\ncompiler output exceeded its limit"
    if out.exit_code != 0:
        return False, text or f"{tool} exited with {out.exit_code}"
    return True, text
