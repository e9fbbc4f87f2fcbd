"""Whether the judge engine a `sandbox:` section names can run here, known in about a second.

Light on purpose (no pyarrow, no docker-py for a local daemon): every command that judges calls
`probe_judge` first, so a dead engine is one line before any input loads or model starts, and
the build's preflight lists it before hours of sampling.
"""

from __future__ import annotations

from collections.abc import Iterable

from pipeline.errors import Unavailable
from pipeline.judge.config import SandboxSection
from sandbox.engines import EngineProbe, EngineUnavailable


class JudgeUnavailable(Unavailable, EngineUnavailable):
    """The configured engine cannot run here: one line saying why (exit 3 for the CLI, still
    an EngineUnavailable for code that catches the sandbox's own error, and never retried by
    the flows)."""


def probe_judge(
    section: SandboxSection | None = None, languages: Iterable[str] = ()
) -> EngineProbe:
    """Reach the engine a `sandbox:` section names without starting it (the Docker daemon and
    image; bwrap, cgroups and a throw-away sandbox; every http server's /v1/version with the
    token). Raises JudgeUnavailable, one line, when it cannot run here or refuses one of
    `languages`."""
    from sandbox.engines import probe_engine

    section = section or SandboxSection()
    try:
        probe = probe_engine(section.engine, **section.engine_options())
    except EngineUnavailable as e:
        raise JudgeUnavailable(f"sandbox engine {section.engine}: {e}") from e
    wanted = set(languages)
    refused = [why for lang, why in probe.unavailable.items() if lang in wanted]
    if refused:
        raise JudgeUnavailable(f"sandbox engine {section.engine} refuses {'; '.join(refused)}")
    return probe
