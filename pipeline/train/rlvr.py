"""Code-policy RLVR: GRPO or GSPO on Train-Questions with LoRA and sandbox rewards.

The policy sees the sampling stage's own prompt for the problem (pipeline.sampling.prompts)
and its program is pulled out with the sampling stage's extractor, so RLVR trains on the
exact format the candidate pools are sampled with. GSPO is GRPO with sequence-level
importance ratios (`importance_sampling_level="sequence"`) and, by default, the GSPO
paper's per-sequence loss (`loss_type="grpo"`).

Per step, besides TRL's own metrics and the rewards' (pipeline.train.code_rewards: reward
time, pass@1, zero-variance groups), the trainer logs `rlvr/generation_time_s`: the wall time
of writing the step's rollouts. A warning is logged when more than
`rlvr.zero_variance_warn_share` of a step's groups had zero reward variance.
"""

from __future__ import annotations

import logging
import time
from functools import cache
from typing import Any

from datasets import Dataset
from transformers import TrainerCallback

from pipeline.common.hub_folder import read_config
from pipeline.judge.interface import judge_spec, open_judge
from pipeline.sampling.prompts import chat_messages
from pipeline.train.code_rewards import ROW_COLUMNS, SandboxRewardScorer
from pipeline.train.common import base_trainer_args, peft_config, with_overrides
from pipeline.train.config import TrainConfig
from pipeline.train.rlvr_report import WHAT_TO_DO, step_warning
from pipeline.train.verifier import vllm_args
from sandbox.engines import JudgeEngine
from schemas.problem import JUDGE_FIELDS, Problem

log = logging.getLogger(__name__)

GENERATION_TIME = "rlvr/generation_time_s"


def question_rows(table: Any, language: str) -> Dataset:
    """RLVR's dataset: the policy's prompt, plus the columns the rewards judge by (the
    problem's judge fields, `ROW_COLUMNS`). Every row's judge request is checked here, so a
    problem that cannot be judged stops training before the first step, naming the row."""
    rows = []
    for i, r in enumerate(table.to_pylist()):
        try:
            problem = Problem(
                problem_id=r["problem_id"],
                source=r["source"],
                source_id=r["source_id"],
                title=r["title"],
                statement=r["query"],
                tests=[{k: v for k, v in t.items() if v is not None} for t in r["tests"]],
                **{k: r[k] for k in (*JUDGE_FIELDS, "entry_point", "starter_code") if k != "tests"},
            )
            judge_spec(problem).request(language, "")
        except ValueError as e:
            raise ValueError(
                f"train_questions row {i} (problem_id={r.get('problem_id')}): {e}"
            ) from e
        rows.append({"prompt": chat_messages(problem, language), **{k: r[k] for k in ROW_COLUMNS}})
    return Dataset.from_list(rows)


def thinking_args(enable_thinking: bool | None) -> dict[str, Any]:
    """GRPOConfig's chat-template switch: Qwen3 templates think unless `enable_thinking` is
    False, so the setting is passed explicitly (None: nothing passed)."""
    if enable_thinking is None:
        return {}
    return {"chat_template_kwargs": {"enable_thinking": enable_thinking}}


@cache
def timed_grpo_trainer() -> type:
    """TRL's GRPOTrainer, plus the wall time of each rollout generation in its metrics.

    Generation is TRL's `_generate` (prompts -> decoded completions; on CUDA the decoding
    waits for the device, so the time is the GPU's real work). It is a private method: a TRL
    without it trains as before, with a warning that generation time is not measured."""
    from trl import GRPOTrainer

    if not callable(getattr(GRPOTrainer, "_generate", None)):
        import trl

        log.warning(
            "trl %s: GRPOTrainer has no _generate; %s is not measured (this project pins the "
            "TRL it was written against in pyproject.toml)",
            trl.__version__,
            GENERATION_TIME,
        )
        return GRPOTrainer

    class TimedGRPOTrainer(GRPOTrainer):
        def _generate(self, prompts: list):
            start = time.perf_counter()
            out = super()._generate(prompts)
            mode = "train" if self.model.training else "eval"
            self._metrics[mode][GENERATION_TIME].append(time.perf_counter() - start)
            return out

    return TimedGRPOTrainer


class ZeroVarianceWatch(TrainerCallback):
    """Warns when most of a step's GRPO groups had zero reward variance: in full the first
    time, then one short line every `every` steps it happens again."""

    def __init__(self, threshold: float, every: int = 10) -> None:
        self.threshold = threshold
        self.every = every
        self.over = 0  # steps over the threshold so far

    def on_log(self, args, state, control, logs=None, **kwargs):
        share = (logs or {}).get("rlvr/zero_variance_groups")
        if share is None or not state.is_world_process_zero:
            return
        message = step_warning(share, self.threshold)
        if message is None:
            return
        self.over += 1
        if self.over == 1:
            log.warning("step %d: %s", state.global_step, message)
        elif self.over % self.every == 0:
            log.warning(
                "step %d: %.0f%% of GRPO groups had zero reward variance (%d steps so far over "
                "%.0f%%): %s",
                state.global_step,
                100 * share,
                self.over,
                100 * self.threshold,
                WHAT_TO_DO,
            )


class _CloseJudge(TrainerCallback):
    def __init__(self, judge: JudgeEngine) -> None:
        self.judge = judge

    def on_train_end(self, args, state, control, **kwargs):
        self.judge.close()


def build_rlvr(
    cfg: TrainConfig, callbacks: list[Any], sandbox_client: JudgeEngine | None = None
) -> Any:
    """A GRPOTrainer for the code policy. Without `sandbox_client` the judge that
    `rlvr.sandbox` names is opened (and closed at the end)."""
    from trl import GRPOConfig

    r = cfg.rlvr
    dataset = question_rows(
        read_config(cfg.data.dir, cfg.data.config, cfg.data.limit, cfg.data.split), r.language
    )
    callbacks = [*callbacks, ZeroVarianceWatch(r.zero_variance_warn_share)]
    if sandbox_client is None:
        sandbox_client = open_judge(r.sandbox)
        callbacks.append(_CloseJudge(sandbox_client))
    scorer = SandboxRewardScorer(sandbox_client, r)
    names = list(r.rewards)
    gspo = r.algorithm == "gspo"
    args = (
        base_trainer_args(cfg)
        | {
            "num_generations": r.num_generations,
            "max_completion_length": r.max_completion_length,
            "temperature": r.temperature,
            "beta": r.beta,
            "loss_type": r.loss_type or ("grpo" if gspo else "dapo"),
            "importance_sampling_level": "sequence" if gspo else "token",
            "epsilon": r.epsilon,
            "epsilon_high": r.epsilon_high if r.epsilon_high is not None else r.epsilon,
            "reward_weights": [r.rewards[n] for n in names],
        }
        | thinking_args(r.enable_thinking)
        | vllm_args(r.vllm)
    )
    return timed_grpo_trainer()(
        model=cfg.model,
        reward_funcs=scorer.reward_funcs(names),
        args=GRPOConfig(**with_overrides(args, cfg)),
        train_dataset=dataset,
        peft_config=peft_config(cfg.lora),
        callbacks=callbacks,
    )
