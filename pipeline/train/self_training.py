"""STaR and ReST-EM: a verifier fine-tuned (TRL's SFTTrainer) on its own correct responses,
episode after episode - RAFT's machinery (`pipeline.train.raft`) with each method's rules.

ReST-EM (`method: restem`, section `restem`; Aletheia's restem_training.py): exactly RAFT's
loop with ReST-EM's settings - 16 samples per prompt at temperature 1 from the episode's model,
up to 5 correct ones kept per prompt, the episode's model fine-tuned on them (lr 5e-5 constant
after warmup, 20480 tokens).

STaR (`method: star`, section `star`; Aletheia's star_training.py), per episode:

1. one response per prompt from the episode's model at temperature 0.6 (stage 1);
2. for every prompt it got wrong, one response to the same prompt with the gold answer stated
   as a hint (`star.hint` after the candidates: rationalisation, stage 2);
3. the correct responses of both stages, each under the plain prompt (the hint is never
   trained on), fine-tune the base model (`star.train_from: base`), and the next episode
   samples from the result.

Samples are written and reused as RAFT's are (`episodes/<e>/samples.jsonl`, `stats.json`); a
STaR sample carries `hinted: true` when it came from stage 2.
"""

from __future__ import annotations

import time
from typing import Any

from pipeline.sampling.seeds import derive_seed
from pipeline.train import raft
from pipeline.train.config import TrainConfig


def as_raft(cfg: TrainConfig) -> TrainConfig:
    """The config with its method's section (`star` / `restem`, both RaftSettings) in RAFT's
    slot, so RAFT's episode machinery runs it; the method (and so its optimiser defaults)
    stays."""
    if cfg.method == "raft":
        return cfg
    return cfg.model_copy(update={"raft": {"star": cfg.star, "restem": cfg.restem}[cfg.method]})


def build_restem(cfg: TrainConfig, callbacks: list[Any]) -> Any:
    """ReST-EM's last episode trainer, after every earlier episode has run."""
    return raft.build_raft(as_raft(cfg), callbacks)


# -- STaR -------------------------------------------------------------------------------


def with_hint(messages: list[dict[str, str]], hint: str) -> list[dict[str, str]]:
    """The prompt with the hint as the last paragraph of its (last) user turn."""
    out = [dict(m) for m in messages]
    user = max(i for i, m in enumerate(out) if m["role"] == "user")
    out[user]["content"] = out[user]["content"].rstrip() + "\n\n" + hint
    return out


def hinted_requests(
    cfg: TrainConfig, episode: int, rows: list[dict[str, Any]], plain: list[Any]
) -> list[Any]:
    """Stage 2's requests: each row's plain request, its prompt carrying the gold answer."""
    out = []
    for row, req in zip(rows, plain, strict=True):
        # the answer as the row stores it (`A`, or `[[A]]` in a bracketed release), as
        # Aletheia's hint states `chosen_answer`
        hint = cfg.raft.hint.format(answer=row["chosen_answer"])
        out.append(
            req.model_copy(
                update={
                    "request_id": f"star-hint:{episode}:{req.request_id}",
                    "messages": with_hint(req.messages, hint),
                    "seed": derive_seed(cfg.optim.seed, "star-hint", episode, req.request_id),
                }
            )
        )
    return out


def star_samples(
    cfg: TrainConfig, episode: int, model: str, rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Stage 1 on every row, then stage 2 (hinted) on the rows with no correct response."""
    samples = raft.sample_episode(cfg, episode, model, rows)
    for s in samples:
        s["hinted"] = False
    if not cfg.raft.rationalize:
        return samples
    right = {s["row"] for s in samples if s["correct"]}
    wrong = [i for i in range(len(rows)) if i not in right]
    if not wrong:
        return samples
    plain = raft.requests(rows, cfg, episode)
    sub_rows = [rows[i] for i in wrong]
    hinted = raft.sample_episode(
        cfg,
        episode,
        model,
        sub_rows,
        hinted_requests(cfg, episode, sub_rows, [plain[i] for i in wrong]),
    )
    n = cfg.raft.num_generations
    for s in hinted:  # back to the episode's row numbers; sample ids after stage 1's
        s.update(row=wrong[s["row"]], sample=n + s["sample"], hinted=True)
    return samples + hinted


def draw_star(
    cfg: TrainConfig, episode: int, model: str, rows: list[dict[str, Any]], fingerprint: str
) -> tuple[list[dict[str, Any]], dict]:
    """RAFT's `_draw` with STaR's two stages (same files, plus the hinted counts)."""
    folder = raft.episode_dir(cfg, episode)
    raft._forget_training(cfg, episode)
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    samples = star_samples(cfg, episode, model, rows)
    elapsed = time.perf_counter() - start
    kept = raft.keep_correct(samples, cfg.raft.keep_per_prompt, cfg.optim.seed, episode)
    kept_ids = {(s["row"], s["sample"]) for s in kept}
    for s in samples:
        s["kept"] = (s["row"], s["sample"]) in kept_ids
    stats = raft.episode_stats(samples, rows, kept, episode, model, fingerprint, elapsed)
    hinted = [s for s in samples if s["hinted"]]
    stats |= {
        "hinted_prompts": len({s["row"] for s in hinted}),
        "hinted_correct": sum(s["correct"] for s in hinted),
        "rows_kept_hinted": sum(s["hinted"] for s in kept),
    }
    raft.write_episode(folder, samples, stats)
    return samples, stats


def star_episode_trainer(cfg: TrainConfig, episode: int, model: str, callbacks: list[Any]) -> Any:
    """One STaR episode: samples from `model`, fine-tunes the base (or `model`, as asked)."""
    base = cfg.model if cfg.raft.train_from == "base" else model
    return raft.episode_trainer(cfg, episode, model, callbacks, train_model=base, draw=draw_star)


def build_star(cfg: TrainConfig, callbacks: list[Any]) -> Any:
    """STaR's last episode trainer, after every earlier episode has run."""
    view = as_raft(cfg)
    model = raft.run_earlier_episodes(view, star_episode_trainer)
    return star_episode_trainer(view, view.raft.episodes - 1, model, callbacks)
