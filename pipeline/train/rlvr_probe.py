"""Before RLVR: at which rollout temperature do the policy's rollouts earn mixed rewards?

GRPO learns only from groups whose rollouts earn different rewards. A policy that always
solves a problem (or never does) gives that problem's group zero advantage, so a run whose
groups are mostly flat trains on nothing. This probe samples the policy as the GRPO trainer
does (temperature only: top-p 1, no top-k, the same chat prompt) on a few of its training
problems at each candidate temperature, judges the programs exactly as the rewards do (the
same `SandboxRewardScorer`), and reports per temperature the rollout pass@1 and the share of
zero-variance groups; `pick_temperature` takes the temperature with the fewest flat groups.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any

from pipeline.train.code_rewards import SandboxRewardScorer, zero_variance_share


def sample_rollouts(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[list[dict[str, str]]],
    *,
    num_generations: int,
    temperature: float,
    max_new_tokens: int,
    batch_prompts: int = 64,
) -> list[str]:
    """`num_generations` completions per prompt, consecutive per prompt (TRL's group order)."""
    import torch

    texts = [
        tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True)
        for p in prompts
    ]
    out: list[str] = []
    for start in range(0, len(texts), batch_prompts):
        enc = tokenizer(
            texts[start : start + batch_prompts],
            return_tensors="pt",
            padding=True,
            add_special_tokens=False,
        ).to(model.device)
        with torch.inference_mode():
            ids = model.generate(
                **enc,
                do_sample=True,
                temperature=temperature,
                top_p=1.0,
                top_k=0,
                max_new_tokens=max_new_tokens,
                num_return_sequences=num_generations,
                pad_token_id=tokenizer.pad_token_id,
                eos_token_id=tokenizer.eos_token_id,
            )
        out += tokenizer.batch_decode(ids[:, enc["input_ids"].shape[1] :], skip_special_tokens=True)
    return out


def probe_temperatures(
    model_dir: str,
    rows: Sequence[dict[str, Any]],
    temperatures: Sequence[float],
    scorer: SandboxRewardScorer,
    *,
    num_generations: int,
    max_new_tokens: int,
    problems: int,
    device: str,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One row per temperature: rollout pass@1, zero-variance groups, and what it cost.
    `rows`: RLVR dataset rows (the `prompt` and the judge columns); `problems` of them, drawn
    with `seed`, are probed."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    chosen = random.Random(seed).sample(list(rows), min(problems, len(rows)))
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokenizer.padding_side = "left"  # generation continues every prompt from its last token
    model = AutoModelForCausalLM.from_pretrained(model_dir).to(device).eval()
    repeated = [r for r in chosen for _ in range(num_generations)]
    table = []
    for t in temperatures:
        torch.manual_seed(seed)
        start = time.perf_counter()
        completions = sample_rollouts(
            model,
            tokenizer,
            [r["prompt"] for r in chosen],
            num_generations=num_generations,
            temperature=t,
            max_new_tokens=max_new_tokens,
        )
        generated = time.perf_counter()
        scored = scorer.score(completions, repeated)
        judged = [s for s in scored if s.judged]
        table.append(
            {
                "temperature": t,
                "problems": len(chosen),
                "rollouts": len(scored),
                "pass_at_1": sum(s.verdict == "AC" for s in judged) / len(judged)
                if judged
                else None,
                "zero_variance_groups": zero_variance_share(
                    [scorer.total_reward(s) for s in scored], num_generations
                ),
                "generation_s": generated - start,
                "reward_s": time.perf_counter() - generated,
            }
        )
    return table


def pick_temperature(table: Sequence[dict[str, Any]]) -> float:
    """The temperature with the fewest zero-variance groups; on a tie, the one whose pass@1 is
    nearest 0.5 (the most reward variance a pass/fail group can have), then the lowest."""

    def key(row: dict[str, Any]) -> tuple[float, float, float]:
        flat = row["zero_variance_groups"]
        p = row["pass_at_1"]
        return (
            1.0 if flat is None else flat,
            1.0 if p is None else abs(p - 0.5),
            row["temperature"],
        )

    if not table:
        raise ValueError("no temperature was probed")
    return min(table, key=key)["temperature"]


def powers_of_two(limit: int) -> list[int]:
    """1, 2, 4, ... up to `limit` (and `limit` itself when it is not a power of two)."""
    ks = [1 << i for i in range(limit.bit_length()) if 1 << i <= limit]
    return ks if ks[-1] == limit else [*ks, limit]


def pass_at_k_table(
    model_dir: str,
    rows: Sequence[dict[str, Any]],
    scorer: SandboxRewardScorer,
    *,
    temperature: float,
    samples: int,
    max_new_tokens: int,
    device: str,
    problems: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """pass@k (Chen et al.'s unbiased estimator, averaged over problems) for k = 1, 2, 4, ...
    up to `samples`, from `samples` rollouts per problem at `temperature`, sampled as the GRPO
    trainer samples and judged as the rewards judge. Beside pass@1, pass@k at large k says
    whether training found new solutions or made the policy surer of those it had (RLVR's
    known sharpening). A rollout the sandbox could not judge (SE) counts as not passing.
    `problems`: that many of `rows`, drawn with `seed` (None: all)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from pipeline.common.passk import pass_at_k

    chosen = list(rows)
    if problems is not None and problems < len(chosen):
        chosen = random.Random(seed).sample(chosen, problems)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(model_dir).to(device).eval()
    torch.manual_seed(seed)
    start = time.perf_counter()
    completions = sample_rollouts(
        model,
        tokenizer,
        [r["prompt"] for r in chosen],
        num_generations=samples,
        temperature=temperature,
        max_new_tokens=max_new_tokens,
        batch_prompts=max(1, 8192 // samples),
    )
    del model
    generated = time.perf_counter()
    scored = scorer.score(completions, [r for r in chosen for _ in range(samples)])
    correct = [
        sum(s.verdict == "AC" for s in scored[i * samples : (i + 1) * samples])
        for i in range(len(chosen))
    ]
    ks = powers_of_two(samples)
    return {
        "temperature": temperature,
        "problems": len(chosen),
        "samples": samples,
        "pass_at_k": {
            str(k): sum(pass_at_k(samples, c, k) for c in correct) / len(correct)
            if correct
            else None
            for k in ks
        },
        "correct": correct,  # per problem, of its `samples` rollouts
        "sandbox_se": sum(s.verdict == "SE" for s in scored),
        "generation_s": generated - start,
        "reward_s": time.perf_counter() - generated,
    }
