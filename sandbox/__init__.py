"""Aletheia's execution sandbox: judge engines (docker, process, http) running a persistent runner.

from sandbox import JudgeRequest, TestCase
from sandbox.engines import open_engine
with open_engine("docker") as engine:  # or "process" (bubblewrap, no Docker), "http" (url=...)
    [result] = engine.judge([JudgeRequest(language="python", source=src, tests=[TestCase(input="1 2\\n", output="3\\n")])])
"""

from sandbox.models import (
    VERDICTS,
    CompareSpec,
    JudgeRequest,
    JudgeResult,
    TestCase,
    TestResult,
)

__all__ = [
    "VERDICTS",
    "CompareSpec",
    "JudgeRequest",
    "JudgeResult",
    "SandboxClient",
    "TestCase",
    "TestResult",
]


def __getattr__(name: str):
    # The client pulls in docker-py and threads; import it only when asked for.
    if name == "SandboxClient":
        from sandbox.client import SandboxClient

        return SandboxClient
    raise AttributeError(name)
