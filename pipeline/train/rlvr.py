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

With `rlvr.generate_ahead` the judging also hides behind the next step's generation: each step
first writes the next step's rollouts (with its own policy, before its update; their programs
go to the judge as they finish), then trains on the rollouts the previous step wrote, whose
verdicts came back meanwhile. The update is one step off-policy, corrected as PPO corrects it:
the ratio is taken against the log-probabilities of the policy that sampled (computed when the
rollouts were written), clipped by `epsilon`. The first step of an epoch has nothing written
ahead and waits for its own rewards. A step's generation metrics (`completions/*`,
`rlvr/generation_time_s`) are those of the rollouts it wrote (trained a step later); its reward
metrics those of the rollouts it trained on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

from datasets import Dataset
from transformers import TrainerCallback

from pipeline.common.hub_folder import read_config
from pipeline.judge.interface import judge_spec, open_judge
from pipeline.sampling.prompts import chat_messages
from pipeline.train.code_rewards import ROW_COLUMNS, VERIFIER_COLUMNS, SandboxRewardScorer
from pipeline.train.common import base_trainer_args, peft_config, with_overrides
from pipeline.train.config import TrainConfig
from pipeline.train.rlvr_report import WHAT_TO_DO, step_warning
from pipeline.train.verifier import clip_high, vllm_args
from pipeline.train.verifier_reward import VerifierReward, verifier_reward
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
        rows.append(
            {
                "prompt": chat_messages(problem, language),
                **{k: r[k] for k in (*ROW_COLUMNS, *VERIFIER_COLUMNS)},
            }
        )
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
_HOOKS = (
    "_generate",
    "_generate_and_score_completions",
    "training_step",
    "_prepare_inputs",  # generate_ahead's too
    "_get_per_token_logps_and_entropies",
    "get_batch_samples",
)


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


class Peekable:
    """An iterator whose next item can be looked at without taking it (the trainer's epoch
    iterator: the next step's prompts are known a step early)."""

    _END = object()

    def __init__(self, source: Iterator[Any]) -> None:
        self.source = source
        self._next: Any = None
        self._held = False

    def __iter__(self) -> Peekable:
        return self

    def __next__(self) -> Any:
        if self._held:
            self._held = False
            item, self._next = self._next, None
            if item is self._END:
                raise StopIteration
            return item
        return next(self.source)

    def peek(self) -> Any | None:
        """The next item, left in place; None at the end."""
        if not self._held:
            self._next, self._held = next(self.source, self._END), True
        return None if self._next is self._END else self._next


@dataclass
class Ahead:
    """Rollouts written a step before they are trained on: the step's inputs, TRL's `_generate`
    output for them, and the sampling policy's per-token log-probabilities (the ratio's base)."""

    inputs: list[dict[str, Any]]
    generated: tuple
    behaviour_logps: Any  # torch.Tensor (rollouts x completion tokens)


def check_generate_ahead(args: Any, world_size: int) -> None:
    """`rlvr.generate_ahead` holds one step's rollouts back for the next: it needs each
    generation to feed exactly one optimizer step, in one process, from transformers' own
    generation (the rollouts stream to the judge from it)."""
    wrong = [
        f"{name} is {value!r} (needs {need})"
        for name, value, need in (
            ("optim.gradient_accumulation_steps", args.gradient_accumulation_steps, 1),
            ("rlvr.steps_per_generation", args.steps_per_generation, 1),
            ("rlvr.num_iterations", args.num_iterations, 1),
            ("rlvr.vllm.enabled", args.use_vllm, False),
            ("processes", world_size, 1),
        )
        if value != need
    ]
    if wrong:
        raise ValueError("rlvr.generate_ahead: " + "; ".join(wrong))


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

    import torch
    from trl.models.utils import disable_gradient_checkpointing
    from trl.trainer.utils import pad, shuffle_sequence_dict

    class TimedGRPOTrainer(GRPOTrainer):
        def __init__(
            self,
            *args: Any,
            scorer: SandboxRewardScorer | None = None,
            generate_ahead: bool = False,
            brpo: SandboxRewardScorer | None = None,
            **kw: Any,
        ):
            super().__init__(*args, **kw)
            self.scorer = scorer
            self.brpo = brpo  # advantages from its verifier's BRPO rewards, not TRL's
            self._batch_rows: list[dict[str, Any]] | None = None
            self.generate_ahead = generate_ahead
            if generate_ahead:
                check_generate_ahead(self.args, self.accelerator.num_processes)
            self._epoch_items: Peekable | None = None
            self._ahead: Ahead | None = None  # the next step's rollouts, written this step
            self._replay: tuple | None = None  # `_generate`'s answer while an Ahead is scored

        # -- generate_ahead: the next step's rollouts written while this step's are judged --
        def get_batch_samples(self, epoch_iterator: Any, num_batches: int, device: Any):
            if not self.generate_ahead:
                return super().get_batch_samples(epoch_iterator, num_batches, device)
            items = self._epoch_items
            if items is None or items.source is not epoch_iterator:
                items = self._epoch_items = Peekable(epoch_iterator)
            return super().get_batch_samples(items, num_batches, device)

        def _prepare_inputs(self, generation_batch: Any):
            if not (self.generate_ahead and self.model.training):
                return super()._prepare_inputs(generation_batch)
            current, self._ahead = self._ahead, None
            if current is None or current.inputs is not generation_batch:
                current = self._write_rollouts(generation_batch)  # nothing ahead: this step's own
            last = self.state.global_step + 1 >= self.state.max_steps
            upcoming = None if last or self._epoch_items is None else self._epoch_items.peek()
            if upcoming is not None:  # the next step's, by this policy, judged as they finish
                self._ahead = self._write_rollouts(upcoming)
            return shuffle_sequence_dict(self._score_rollouts(current))

        def _write_rollouts(self, inputs: list[dict[str, Any]]) -> Ahead:
            self._batch_rows = inputs
            try:
                generated = self._generate([x["prompt"] for x in inputs])
            finally:
                self._batch_rows = None
            return Ahead(inputs, generated, self._sampling_logps(generated))

        def _sampling_logps(self, generated: tuple) -> Any:
            """The per-token log-probabilities of these rollouts under the policy now (the one
            that wrote them), padded as TRL pads them for the loss."""
            device = self.accelerator.device
            pad_id = self._tokenizer.pad_token_id
            multiple = self.pad_to_multiple_of
            prompts = [torch.tensor(ids) for ids in generated[0]]
            completions = [torch.tensor(ids) for ids in generated[1]]

            def padded(rows: list, value: int, side: str) -> Any:
                return pad(rows, padding_value=value, padding_side=side,
                           pad_to_multiple_of=multiple).to(device)  # fmt: skip

            prompt_ids = padded(prompts, pad_id, "left")
            completion_ids = padded(completions, pad_id, "right")
            ids = torch.cat([prompt_ids, completion_ids], 1)
            mask = torch.cat(
                [
                    padded([torch.ones_like(p) for p in prompts], 0, "left"),
                    padded([torch.ones_like(c) for c in completions], 0, "right"),
                ],
                1,
            )
            width = completion_ids.size(1)  # TRL's logits_to_keep
            with (
                torch.no_grad(),
                disable_gradient_checkpointing(self.model, self.args.gradient_checkpointing_kwargs),
            ):
                logps, _, _ = self._get_per_token_logps_and_entropies(
                    self.model, ids, mask, width, batch_size=self.args.per_device_train_batch_size
                )
            return logps

        def _score_rollouts(self, ahead: Ahead) -> dict[str, Any]:
            """TRL's scoring of rollouts written earlier (its `_generate` answers with them),
            with the ratio taken against the policy that wrote them."""
            self._replay = ahead.generated
            try:
                out = self._with_brpo(super()._generate_and_score_completions(ahead.inputs))
            finally:
                self._replay = None
            if out["completion_ids"].shape != ahead.behaviour_logps.shape:
                raise RuntimeError(
                    f"generate_ahead: the rollouts' log-probabilities are "
                    f"{tuple(ahead.behaviour_logps.shape)}, their tokens "
                    f"{tuple(out['completion_ids'].shape)}"
                )
            out["old_per_token_logps"] = ahead.behaviour_logps
            return out

        def _generate_and_score_completions(self, inputs: list[dict[str, Any]]):
            self._batch_rows = inputs  # the rows `_generate` hands the scorer with the rollouts
            try:
                return self._with_brpo(super()._generate_and_score_completions(inputs))
            finally:
                self._batch_rows = None

        def _with_brpo(self, out: dict[str, Any]) -> dict[str, Any]:
            """TRL's scored batch, its advantages replaced by the verifier's BRPO ones (the
            rewards TRL just asked for: the same rollouts, in the same order)."""
            if self.brpo is None or not self.model.training:
                return out
            old = out["advantages"]
            new = self.brpo.brpo_advantages(old.shape[0])
            out["advantages"] = torch.tensor(new, dtype=old.dtype, device=old.device)
            return out

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
            if self._replay is not None:  # rollouts written a step ago (generate_ahead)
                return self._replay
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
    def __init__(self, judge: JudgeEngine | VerifierReward) -> None:
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
    verifier = verifier_reward(r)
    if verifier is not None:
        callbacks.append(_CloseJudge(verifier))
    scorer = SandboxRewardScorer(sandbox_client, r, verifier)
    names = list(r.rewards)
    args = rlvr_args(cfg)
    trainer = timed_grpo_trainer()
    extra: dict[str, Any] = {}
    if trainer is not GRPOTrainer:
        extra = {"scorer": scorer if r.overlap_judging else None,
                 "generate_ahead": r.generate_ahead,
                 "brpo": scorer if r.brpo else None}  # fmt: skip
    elif r.generate_ahead or r.brpo:
        raise ValueError(
            "rlvr.generate_ahead and the verifier's BRPO advantages need the TRL this project "
            "pins (pyproject.toml)"
        )
    return trainer(
        **extra,
        model=cfg.model,
        reward_funcs=scorer.reward_funcs(names),
        args=GRPOConfig(**with_overrides(args, cfg)),
        train_dataset=dataset,
        peft_config=peft_config(cfg.lora),
        callbacks=callbacks,
    )
