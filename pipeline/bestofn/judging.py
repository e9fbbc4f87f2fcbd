"""Judge every sample through the judge interface, and run the output probes.

Each distinct (problem, language, program) is judged once; its verdict decides whether the
sample is correct (AC on every test), so the verifier's pick, the oracle and the baselines
all read the same sandbox verdicts. A sample with no program never runs and never passes;
SE (the sandbox itself failed) counts as not passed and is reported apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.bestofn.probes import Signature, probe_request, signature
from pipeline.bestofn.samples import ProblemSamples
from pipeline.common.progress import track
from pipeline.judge.config import SandboxSection
from pipeline.judge.interface import JudgeSpec, JudgeSpecError, judge_spec, open_judge
from sandbox.engines import JudgeEngine
from sandbox.models import JudgeRequest

NO_PROGRAM = "no_program"  # extraction found no program: not run, not passed
UNJUDGEABLE = "unjudgeable"  # no judge request fits (e.g. C++ on a function-mode problem)


@dataclass
class Verdicts:
    verdicts: list[list[str]]  # per problem, per sample
    signatures: list[list[Signature | None]] | None  # output digests; None: not probed
    stamp: str | None  # the engine that judged

    def correct(self, p: int) -> list[bool]:
        return [v == "AC" for v in self.verdicts[p]]


def _run(engine: JudgeEngine, requests: list[JudgeRequest], progress: bool, what: str) -> list:
    tracker = track(what, len(requests))
    results: list = [None] * len(requests)
    for i, res in engine.judge_iter(requests, progress=progress):
        results[i] = res
        tracker.advance()
    return results


def judge_samples(
    problems: Sequence[ProblemSamples],
    sandbox: SandboxSection,
    *,
    time_limit_scale: float = 1.0,
    probe: bool = True,
    progress: bool = True,
    client: JudgeEngine | None = None,
) -> Verdicts:
    """Every sample's verdict and (with `probe`) its outputs on the tests' inputs."""
    specs: list[JudgeSpec] = [
        judge_spec(ps.problem, time_limit_scale=time_limit_scale) for ps in problems
    ]
    keys: dict[tuple[int, str, str], int] = {}
    requests: list[JudgeRequest] = []
    verdicts: list[list[str]] = []
    for p, ps in enumerate(problems):
        row = []
        for s in ps.samples:
            if not s.code.strip():
                row.append(NO_PROGRAM)
                continue
            key = (p, s.language, s.code)
            if key not in keys:
                try:
                    request = specs[p].request(s.language, s.code)
                except JudgeSpecError:
                    row.append(UNJUDGEABLE)
                    continue
                keys[key] = len(requests)
                requests.append(request)
            row.append(f"#{keys[key]}")  # filled in below
        verdicts.append(row)
    probes: dict[tuple[int, str, str], int] = {}
    probe_requests: list[JudgeRequest] = []
    if probe:
        for p, ps in enumerate(problems):
            for s in ps.samples:
                key = (p, s.language, s.code)
                if key in probes:
                    continue
                req = probe_request(specs[p], s.language, s.code)
                if req is not None:
                    probes[key] = len(probe_requests)
                    probe_requests.append(req)
    own = client is None
    engine = open_judge(sandbox) if client is None else client
    try:
        results = _run(engine, requests, progress, "programs judged")
        probed = _run(engine, probe_requests, progress, "programs probed") if probe else []
        stamp = engine.stamp
    finally:
        if own:
            engine.close()
    for row in verdicts:
        for i, v in enumerate(row):
            if v.startswith("#"):
                row[i] = results[int(v[1:])].verdict
    signatures = None
    if probe:
        signatures = [
            [
                signature(probed[probes[key]], len(specs[p].tests))
                if (key := (p, s.language, s.code)) in probes
                else None
                for s in ps.samples
            ]
            for p, ps in enumerate(problems)
        ]
    return Verdicts(verdicts, signatures, stamp if requests or probe_requests else None)
