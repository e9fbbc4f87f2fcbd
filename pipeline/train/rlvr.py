"""Code-policy RLVR: GRPO or GSPO on Train-Questions with LoRA and sandbox rewards.

The policy sees the sampling stage's own prompt for the problem (pipeline.sampling.prompts)
and its program is pulled out with the sampling stage's extractor, so RLVR trains on the
exact format the candidate pools are sampled with. GSPO is GRPO with sequence-level
importance ratios (`importance_sampling_level="sequence"`) and, by default, the GSPO
paper's per-sequence loss (`loss_type="grpo"`).
"""

from __future__ import annotations

from typing import Any

from datasets import Dataset
from transformers import TrainerCallback

from pipeline.judge.interface import judge_spec, open_judge
from pipeline.sampling.prompts import chat_messages
from pipeline.train.code_rewards import ROW_COLUMNS, SandboxRewardScorer
from pipeline.train.common import base_trainer_args, peft_config, with_overrides
from pipeline.train.config import TrainConfig
from pipeline.train.data import read_config
from pipeline.train.verifier import vllm_args
from sandbox.engines import JudgeEngine
from schemas.problem import JUDGE_FIELDS, Problem


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
    from trl import GRPOConfig, GRPOTrainer

    r = cfg.rlvr
    dataset = question_rows(
        read_config(cfg.data.dir, cfg.data.config, cfg.data.limit, cfg.data.split), r.language
    )
    callbacks = list(callbacks)
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
    return GRPOTrainer(
        model=cfg.model,
        reward_funcs=scorer.reward_funcs(names),
        args=GRPOConfig(**with_overrides(args, cfg)),
        train_dataset=dataset,
        peft_config=peft_config(cfg.lora),
        callbacks=callbacks,
    )
