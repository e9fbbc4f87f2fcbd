"""What a Best-of-N run reads, asks the verifier and reports (`BestOfNConfig`).

Defaults are Aletheia's `bon_livecodebench.py`: list mode, the Think prompt, one response per
prompt (K = 1) at temperature 0.6 / top-p 0.95 with a 16384-token budget, pairwise with both
orders of every pair. Ours, each an option: knockout for lists past 8, K votes, constrained
answers for untrained verifiers, the verifier-free baselines and the accuracy-against-N curve.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from pipeline.evaluate.config import default_backend, with_eval_defaults
from pipeline.judge.config import SandboxSection
from pipeline.policy_eval.config import BootstrapSettings
from pipeline.sampling.config import BackendOptions

SelectionMode = Literal["list", "pairwise", "knockout"]
MAX_LIST = 8  # letters A..H: the longest list one prompt shows (Aletheia's list mode)


class BestOfNConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verifier: str = Field(description="The verifier: a model folder, a hub id or a served name.")
    name: str | None = Field(None, description="The verifier's name in the report; None = path.")
    mode: SelectionMode = Field(
        "list",
        description="list: all N samples in one prompt (N <= 8, letters A..H); pairwise: every "
        "pair of samples as its own prompt, the most wins picked; knockout: lists of at most "
        "`knockout_size`, each list's pick goes on to the next round until one is left.",
    )
    samples: int | None = Field(
        None,
        ge=1,
        description="N: the first N samples of each problem (by sample index); None = all a "
        "problem has (every problem must have the same number).",
    )
    k: int = Field(
        1,
        ge=1,
        description="Responses per prompt (votes): list and knockout take the most-voted "
        "letter (ties to the earlier letter), pairwise counts every valid verdict as a win.",
    )
    scoring: bool = Field(
        False,
        description="Aletheia's scoring variant: the verifier scores every candidate 0-10 "
        "(`\\boxed{[s_A, s_B, ...]}`); a response picks the unique highest score.",
    )
    both_orders: bool = Field(
        True,
        description="pairwise: ask every pair in both orders (Aletheia's position-bias "
        "correction); false: once, lower sample index first.",
    )
    knockout_size: int = Field(
        5, ge=2, le=MAX_LIST, description="knockout: the most candidates one prompt shows."
    )
    style: Literal["think", "instruct"] = Field(
        "think", description="The verifier prompt's style (pipeline.common.verifier_prompt)."
    )
    prompt_template: str | None = Field(
        None, description="User-turn template file; None = our wording."
    )
    system_template: str | None = Field(
        None, description="Instruct system-turn template file; None = our wording."
    )
    answer_rule: Literal["after_think", "first_box"] = Field(
        "after_think",
        description="How a verdict is read (pipeline/common/answers.py); Aletheia's Best-of-N "
        "reads the first box after the last </think>.",
    )
    constrain_answer: bool = Field(
        False,
        description="Ours: each response ends in `\\boxed{X}` with X a letter the model picks "
        "(constrained decoding), for verifiers never trained on the format. Not with scoring.",
    )
    temperature: float = Field(0.6, ge=0, description="Verifier sampling temperature.")
    top_p: float = Field(0.95, gt=0, le=1, description="Verifier nucleus sampling mass.")
    max_new_tokens: int = Field(16384, ge=1, description="Verifier response budget in tokens.")
    seed: int = Field(
        0, description="Seed every prompt's own seed (and the random draw) comes from."
    )
    backend: BackendOptions = Field(
        default_factory=default_backend,
        description="How the verifier generates (an evaluation backend: transformers, an "
        "OpenAI-compatible server such as vLLM, offline vLLM).",
    )
    limit: int | None = Field(
        None, ge=1, description="The first N problems (by source id), for quick runs."
    )
    curve: bool = Field(
        True,
        description="Accuracy against N: the verifier's pick on each problem's first n "
        "samples for every n = 2..N (list and knockout ask again for each n; pairwise reads "
        "it from the same verdicts).",
    )
    output_probe: bool = Field(
        True,
        description="Run every Python sample on the tests' inputs to compare outputs (the "
        "majority-by-output baseline); false: that baseline is left out.",
    )
    time_limit_scale: float = Field(
        1.0, gt=0, description="Multiplies every time limit, as judge.time_limit_scale."
    )
    sandbox: SandboxSection = Field(
        default_factory=SandboxSection, description="The judge (engine, pool)."
    )
    bootstrap: BootstrapSettings = Field(
        default_factory=BootstrapSettings, description="Bootstrap confidence intervals."
    )
    progress: bool = Field(True, description="Show progress.")

    @model_validator(mode="before")
    @classmethod
    def _backend_defaults(cls, data: Any) -> Any:
        if isinstance(data, dict) and "backend" in data:
            return data | {"backend": with_eval_defaults(data["backend"])}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> BestOfNConfig:
        if self.constrain_answer and self.scoring:
            raise ValueError(
                "constrain_answer: constrained decoding writes a letter, the scoring variant "
                "asks for a list of scores; use one of them"
            )
        if self.mode == "list" and self.samples is not None and self.samples > MAX_LIST:
            raise ValueError(
                f"samples={self.samples}: list mode shows at most {MAX_LIST} (A..H) in one "
                "prompt; use mode: knockout (lists of at most knockout_size) or pairwise"
            )
        return self

    @property
    def display_name(self) -> str:
        return self.name or self.verifier

    @classmethod
    def from_yaml(cls, path: str | Path, **overrides: Any) -> BestOfNConfig:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a mapping")  # noqa: TRY004 - bad content
        return cls.model_validate({**data, **{k: v for k, v in overrides.items() if v is not None}})
