"""`reference` candidates: the solutions a problem source ships, correct and incorrect."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from schemas.candidate import Candidate
from schemas.ids import candidate_id_for
from schemas.problem import Problem

log = logging.getLogger(__name__)


def reference_candidates(
    problems: Iterable[Problem], *, tier: str = "weak", languages: Iterable[str] | None = None
) -> list[Candidate]:
    """One candidate per distinct (problem, language, normalised code) among `problem.solutions`.

    `reference_correct` is what the source claims; the judge still decides. The same program
    listed twice is kept once; listed both correct and incorrect, its claim becomes None.
    `sample_index` is the solution's position in the source row (provenance).
    """
    wanted = set(languages) if languages is not None else None
    out: dict[tuple[str, str], Candidate] = {}
    for problem in problems:
        for index, sol in enumerate(problem.solutions):
            if wanted is not None and sol.language not in wanted:
                continue
            if not sol.code.strip():
                log.warning(
                    "problem %s: solutions[%d] has empty code; skipped", problem.problem_id, index
                )
                continue
            cid = candidate_id_for(sol.language, sol.code)
            key = (problem.problem_id, cid)
            if key in out:
                if out[key].reference_correct != sol.correct:
                    log.warning(
                        "problem %s: solution %s listed as both correct and incorrect",
                        problem.problem_id,
                        cid,
                    )
                    out[key] = out[key].model_copy(update={"reference_correct": None})
                continue
            out[key] = Candidate(
                candidate_id=cid,
                problem_id=problem.problem_id,
                language=sol.language,
                code=sol.code,
                completion=None,
                extraction="not_applicable",
                origin="reference",
                generator=f"reference:{problem.source}",
                tier=tier,  # type: ignore[arg-type]
                sample_index=index,
                reference_correct=sol.correct,
            )
    return list(out.values())
