"""JUDGE's preflight check: the judge engine is reached (not started) before the build starts.

With `ctx.docker` (every build's preflight; a publish of an existing build skips it): the engine
the section names is probed (pipeline/judge/availability.py): the Docker daemon and the image;
bwrap, cgroups and a throw-away sandbox for `process`; every `http` server's /v1/version with
the token. An engine that cannot run, or that refuses a language the build samples, is a fatal
finding in one line; its degradations (a missing image the first shard builds, no cgroups) are
notes. Without it, only the engine's options (the http engine's address and token)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.stage import CheckContext, Finding

if TYPE_CHECKING:
    from pipeline.judge.stage import JudgeCall


def check_judge(call: JudgeCall, ctx: CheckContext) -> list[Finding]:
    from pipeline.judge.availability import JudgeUnavailable, probe_judge

    try:
        call.sandbox.engine_options()
    except ValueError as e:
        return [Finding("config", " ".join(str(e).split()))]
    if not ctx.docker:
        return []
    # The main judge and the adversarial re-judges share one section: probe it once.
    probes: dict[str, list[Finding]] = ctx.facts.get("judge_probes", {})
    key = call.sandbox.model_dump_json()
    if key not in probes:
        try:
            probe = probe_judge(call.sandbox, languages=ctx.facts.get("languages", ()))
        except JudgeUnavailable as e:
            probes[key] = [Finding("judge", " ".join(str(e).split()), unavailable=True)]
        else:
            probes[key] = [Finding("judge", note, fatal=False) for note in probe.notes]
    return probes[key]
