"""ASSEMBLE's preflight check (and DPO's template half): every verifier prompt template a
section reads has exactly its kind's placeholders (`template_problem`).

A run-level template propagated into `assemble` and `dpo` is named by its run-level key:
preflight puts `{(file, kind): key}` in `ctx.facts["run_templates"]`, so both sections give
the same finding and the report keeps it once."""

from __future__ import annotations

from typing import Any

from pipeline.common.stage import CheckContext, Finding
from pipeline.common.verifier_prompt import template_problem

# (config key, kind): a template file of a user or system turn, or a checkout of Aletheia
# whose own prompts replace both (`aletheia_src`, pipeline/common/aletheia_prompts.py).
TEMPLATE_KEYS = (
    ("prompt_template", "user"),
    ("system_template", "system"),
    ("aletheia_src", "aletheia"),
)


def section_templates(prefix: str, section: Any) -> list[tuple[str, str, str]]:
    """(config key, file, kind) of each template `section` sets."""
    out = []
    for key, kind in TEMPLATE_KEYS:
        value = getattr(section, key, None)
        if value:
            out.append((f"{prefix}{key}", value, kind))
    return out


def prompt_styles(section: Any) -> tuple[str, ...]:
    """The prompt styles a section builds: a DPO section its variants, an evaluation or
    training prompt its style; assembly's cap needs the Think style (and measures the
    Instruct one where the wording has it)."""
    if hasattr(section, "variants"):
        return tuple(section.variants)
    return (section.style,) if hasattr(section, "style") else ("think",)


def check_templates(prefix: str, section: Any, ctx: CheckContext) -> list[Finding]:
    named: dict[tuple[str, str], str] = ctx.facts.get("run_templates", {})
    out = []
    for where, path, kind in section_templates(prefix, section):
        where = named.get((path, kind), where)
        problem = template_problem(where, path, kind, prompt_styles(section))
        if problem:
            out.append(Finding("templates", problem))
    return out


def check_assemble(section: Any, ctx: CheckContext) -> list[Finding]:
    return check_templates("assemble.", section, ctx)
