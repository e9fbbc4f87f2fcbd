"""DPO_RESPONSES' preflight check: the verifier models it samples get the policy sources'
checks (their weights resolve, their backends' needs: pipeline/sampling/checks.py), and
its prompt templates their placeholders (and Aletheia's prompt, with `aletheia_src`, the box
form the build publishes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pipeline.common.stage import CheckContext, Finding
from pipeline.instances.prompt_checks import check_templates
from pipeline.sampling.checks import LOCAL_BACKENDS, check_backend, check_model

if TYPE_CHECKING:
    from pipeline.instances.dpo.config import DPOConfig


def dpo_judges(dpo: DPOConfig) -> list[tuple[str, Any]]:
    """(config path, spec) of every DPO verifier model the build samples."""
    out: list[tuple[str, Any]] = [(f"dpo.judges.{j.name}", j) for j in dpo.judges]
    fb = dpo.fallback_judge
    if fb is not None and dpo.construction == "on_policy" and dpo.fallback == "strong_judge":
        out.append((f"dpo.fallback_judge.{fb.name}", fb))
    return out


def check_dpo(dpo: DPOConfig, ctx: CheckContext) -> list[Finding]:
    out: list[Finding] = []
    judges = dpo_judges(dpo)
    for who, judge in judges:
        if judge.backend.type in LOCAL_BACKENDS:
            out += check_model(who, judge.model_ref, ctx)
    for who, judge in judges:
        out += check_backend(who, judge.backend, judge.model_ref)
    out += check_templates("dpo.", dpo, ctx)
    if dpo.aletheia_src:  # Aletheia's prompt must ask for the box the gold splice writes
        from pipeline.common.aletheia_prompts import form_problem

        if problem := form_problem("dpo.aletheia_src", dpo.aletheia_src, dpo.answer_format):
            out.append(Finding("templates", problem))
    return out
