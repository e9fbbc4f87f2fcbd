"""Aletheia's execution sandbox: a pool of locked-down Docker containers with a persistent runner.

from sandbox import SandboxClient, JudgeRequest, TestCase
with SandboxClient() as client:
    [result] = client.judge([JudgeRequest(language="python", source=src, tests=[TestCase(input="1 2\\n", output="3\\n")])])
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
