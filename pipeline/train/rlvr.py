"""Code-policy RLVR: GRPO or GSPO on Train-Questions with LoRA and sandbox rewards.

The policy sees the sampling stage's own prompt for the problem (pipeline.sampling.prompts)
and its program is pulled out with the sampling stage's extractor, so RLVR trains on the
exact format the candidate pools are sampled with. GSPO is GRPO with sequence-level
importance ratios (`importance_sampling_level="sequence"`) and, by default, the GSPO
paper's per-sequence loss (`loss_type="grpo"`).

Per step, besides TRL's own metrics and the rewards' (pipeline.train.code_rewards: reward
time, pass@1, zero-variance groups), the trainer logs `rlvr/generation_time_s` (the wall time
of writing the step's rollouts) and `rlvr/step_time_s` (the wall time of the whole training
step: rollouts, rewards, forward and backward). A warning is logged when more than
`rlvr.zero_variance_warn_share` of a step's groups had zero reward variance.

Judging runs beside generation: each rollout's program goes to the judge the moment the
rollout writes its EOS (`SandboxRewardScorer.submit`, in the background), while the rest of
the batch is still being generated; TRL's reward functions then collect the verdicts
(`rlvr/reward_wait_s` is the part of the judging the step waited for;
`rlvr/streamed_rollouts` the share of the rollouts sent to the judge before generation ended).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
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
from pipeline.train.verifier import clip_high, vllm_args
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


STEP_TIME = "rlvr/step_time_s"
STREAMED = "rlvr/streamed_rollouts"  # the share of rollouts sent to the judge mid-generation
# TRL's private hooks the trainer below wraps (pinned TRL: pyproject.toml).
_HOOKS = ("_generate", "_generate_and_score_completions", "training_step")


class FinishedRollouts:
    """A transformers streamer (`generate(streamer=...)`) that hands each rollout over as soon
    as it is finished: the step it writes an EOS, with its tokens up to and including it (as
    TRL cuts them). Rows still running at the end are left to the caller."""

    def __init__(
        self, eos_ids: Sequence[int], on_finished: Callable[[list[int], list[list[int]]], None]
    ):
        self.eos_ids = set(eos_ids)
        self.on_finished = on_finished
        self.tokens: list[list[int]] = []
        self.done: list[bool] = []

    def put(self, value: Any) -> None:
        if value.dim() == 2:  # the prompts, handed over first
            self.tokens = [[] for _ in range(value.shape[0])]
            self.done = [False] * value.shape[0]
            return
        finished = []
        for i, token in enumerate(value.tolist()):
            if self.done[i]:
                continue
            self.tokens[i].append(token)
            if token in self.eos_ids:
                self.done[i] = True
                finished.append(i)
        if finished:
            self.on_finished(finished, [self.tokens[i] for i in finished])

    def end(self) -> None:
        pass


@contextmanager
def streaming_to(model: Any, streamer: FinishedRollouts) -> Iterator[None]:
    """`model.generate` passes `streamer` while inside (TRL's generation call takes none)."""
    original = model.generate

    def generate(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("streamer", streamer)
        return original(*args, **kwargs)

    model.generate = generate
    try:
        yield
    finally:
        del model.generate  # the class's method again


@cache
def timed_grpo_trainer() -> type:
    """TRL's GRPOTrainer, plus the wall time of each rollout generation and training step in
    its metrics, and each rollout's program sent to the judge as soon as the rollout is done.

    Generation is TRL's `_generate` (prompts -> decoded completions; on CUDA the decoding
    waits for the device, so the time is the GPU's real work). With a `scorer`
    (code_rewards.SandboxRewardScorer), transformers' generation streams each finished rollout
    (FinishedRollouts) to `scorer.submit` while the others are still being written, and the
    rest follow once generation ends; TRL's reward functions then wait for the verdicts. These
    are private methods: a TRL without them trains as before (rewards judged when TRL asks),
    with a warning that generation time is not measured."""
    from trl import GRPOTrainer

    if not all(callable(getattr(GRPOTrainer, h, None)) for h in _HOOKS):
        import trl

        log.warning(
            "trl %s: GRPOTrainer lacks one of %s; %s is not measured and judging starts when "
            "the rewards are asked for (this project pins the TRL it was written against in "
            "pyproject.toml)",
            trl.__version__,
            _HOOKS,
            GENERATION_TIME,
        )
        return GRPOTrainer

    class TimedGRPOTrainer(GRPOTrainer):
        def __init__(self, *args: Any, scorer: SandboxRewardScorer | None = None, **kw: Any):
            super().__init__(*args, **kw)
            self.scorer = scorer
            self._batch_rows: list[dict[str, Any]] | None = None

        def _generate_and_score_completions(self, inputs: list[dict[str, Any]]):
            self._batch_rows = inputs  # the rows `_generate` hands the scorer with the rollouts
            try:
                return super()._generate_and_score_completions(inputs)
            finally:
                self._batch_rows = None

        def _judged_rows(self, prompts: list) -> list[dict[str, Any]] | None:
            """The batch's reward rows, one per rollout, when its rollouts can go to the scorer
            as they finish (transformers generation of plain completions, the rewards'
            dataset); None otherwise."""
            rows = self._batch_rows
            if self.scorer is None or rows is None or len(rows) != len(prompts):
                return None
            if self.use_vllm or self.tools or self.rollout_func is not None:
                return None
            if any(c not in rows[0] for c in ROW_COLUMNS):
                return None
            return [{c: r[c] for c in ROW_COLUMNS} for r in rows]

        def _generate(self, prompts: list):
            rows = self._judged_rows(prompts)
            start = time.perf_counter()
            if rows is None:
                out = super()._generate(prompts)
            else:
                scorer = self.scorer
                assert scorer is not None

                streamed = [0]

                def finished(indices: list[int], tokens: list[list[int]]) -> None:
                    texts = self.processing_class.batch_decode(tokens, skip_special_tokens=True)
                    scorer.submit(texts, [rows[i] for i in indices])
                    streamed[0] += len(indices)

                stream = FinishedRollouts(self.eos_token_ids, finished)
                with streaming_to(self.accelerator.unwrap_model(self.model_wrapped), stream):
                    out = super()._generate(prompts)
                scorer.submit(out[3], rows)  # the rollouts cut at the length limit
            mode = "train" if self.model.training else "eval"
            self._metrics[mode][GENERATION_TIME].append(time.perf_counter() - start)
            if rows is not None:
                self._metrics[mode][STREAMED].append(streamed[0] / len(rows))
            return out

        def training_step(self, *args: Any, **kwargs: Any):
            start = time.perf_counter()
            loss = super().training_step(*args, **kwargs)
            self._metrics["train"][STEP_TIME].append(time.perf_counter() - start)
            return loss

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


def rlvr_args(cfg: TrainConfig) -> dict[str, Any]:
    """The GRPOConfig fields of an RLVR run."""
    r = cfg.rlvr
    gspo = r.algorithm == "gspo"
    return (
        base_trainer_args(cfg)
        | clip_high(r.trl_args())
        | {
            "loss_type": r.loss_type or ("grpo" if gspo else "dapo"),
            "importance_sampling_level": "sequence" if gspo else "token",
            "reward_weights": [r.rewards[n] for n in r.rewards],
        }
        | thinking_args(r.enable_thinking)
        | vllm_args(r.vllm)
    )


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
    callbacks = [*callbacks, ZeroVarianceWatch(r.zero_variance_warn_share)]
    if sandbox_client is None:
        sandbox_client = open_judge(r.sandbox)
        callbacks.append(_CloseJudge(sandbox_client))
    scorer = SandboxRewardScorer(sandbox_client, r)
    names = list(r.rewards)
    args = rlvr_args(cfg)
    trainer = timed_grpo_trainer()
    extra = {"scorer": scorer if r.overlap_judging else None} if trainer is not GRPOTrainer else {}
    return trainer(
        **extra,
        model=cfg.model,
        reward_funcs=scorer.reward_funcs(names),
        args=GRPOConfig(**with_overrides(args, cfg)),
        train_dataset=dataset,
        peft_config=peft_config(cfg.lora),
        callbacks=callbacks,
    )
