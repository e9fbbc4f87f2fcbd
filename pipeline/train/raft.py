"""RAFT: on-policy rejection-sampling fine-tuning of a verifier (Aletheia's RAFT recipe).

One episode, from the episode's model:

1. sample `raft.num_generations` responses per instance through a generation backend, with the
   shared verifier prompt (a Think prompt's `<think>\\n` prefill is continued, as in GRPO);
2. read every answer with the project's one reader (`pipeline.common.answers`) and keep only
   responses whose answer is the gold letter, at most `raft.keep_per_prompt` per instance, drawn
   at random: the verifier learns from its own correct responses, never from a negative;
3. fine-tune on them with TRL's SFTTrainer, loss on the response only.

The next episode samples from the model the previous one wrote. Per episode, under
`<output_dir>/episodes/<e>/`: `samples.jsonl` (every response, its answer, whether it was kept),
`stats.json` (counts, generation wall time and tokens) and, for every episode but the last,
`checkpoints/`, `final/` and `metrics.jsonl`. The last episode trains like every other method
(`<output_dir>/checkpoints`, `final/`, `summary.json`). A finished episode is never redone; a
re-run reuses the samples of the unfinished one and resumes its newest checkpoint.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from datasets import Dataset

from pipeline.common.answers import answer_choices, column_answer_format, gold_letter, parse_answer
from pipeline.common.hashing import canonical_json, sha256_text
from pipeline.common.hub_folder import read_config
from pipeline.common.verifier_prompt import PromptSpec, build_messages, prefill
from pipeline.sampling.backends.base import GenerationRequest
from pipeline.sampling.seeds import derive_seed
from pipeline.train.common import last_checkpoint, save_final
from pipeline.train.config import RaftSettings, TrainConfig
from pipeline.train.data import prompt_and_response
from pipeline.train.metrics_log import METRICS_FILE, JsonlMetricsCallback, read_metrics

log = logging.getLogger(__name__)

SAMPLES_FILE = "samples.jsonl"
STATS_FILE = "stats.json"
DONE_FILE = "done.json"


class NothingToLearnError(RuntimeError):
    """An episode in which no sampled response picked the gold letter."""


def episode_dir(cfg: TrainConfig, episode: int) -> Path:
    return cfg.output_dir / "episodes" / str(episode)


def episode_rows(cfg: TrainConfig) -> list[dict[str, Any]]:
    """The instances every episode samples: the data config, or a seeded sample of it."""
    rows = read_config(cfg.data.dir, cfg.data.config, cfg.data.limit).to_pylist()
    n = cfg.raft.prompts_per_episode
    if n is not None and n < len(rows):
        picked = sorted(random.Random(cfg.optim.seed).sample(range(len(rows)), n))
        rows = [rows[i] for i in picked]
    return rows


def prompt_spec(cfg: TrainConfig, rows: list[dict[str, Any]]) -> PromptSpec:
    """The config's prompt, asking for the box form the rows' `chosen_answer` is in (unless
    `prompt.answer_format` names one)."""
    return cfg.prompt.spec(column_answer_format([r["chosen_answer"] for r in rows]))


def _messages(
    r: dict[str, Any], i: int, cfg: TrainConfig, spec: PromptSpec
) -> list[dict[str, str]]:
    try:
        return build_messages(r["query"], r["candidates"], r["candidate_languages"], spec)
    except ValueError as e:
        raise ValueError(f"{cfg.data.config} row {i} (prompt_id={r.get('prompt_id')}): {e}") from e


def generation_fingerprint(cfg: TrainConfig, episode: int, model: str) -> str:
    """What decides an episode's samples: a change means they are drawn again."""
    r = cfg.raft
    # Settings a subclass adds (STaR's rationalisation) decide its samples too; a plain RAFT
    # section adds none, so RAFT fingerprints stay as they were. TRL's fields (the episode's
    # fine-tuning) do not.
    added = set(type(r).model_fields) - set(RaftSettings.model_fields)
    extra = {k: v for k, v in r.model_dump(mode="json").items() if k in added}
    return sha256_text(
        canonical_json(
            ({"extra": extra} if extra else {})
            | {
                "model": model,
                "episode": episode,
                "data": [str(cfg.data.dir), cfg.data.config, cfg.data.limit],
                "prompt": cfg.prompt.model_dump(),
                "seed": cfg.optim.seed,
                "raft": [
                    r.num_generations,
                    r.temperature,
                    r.top_p,
                    r.budget,
                    r.prompts_per_episode,
                    r.constrain_answer,
                    r.keep_per_prompt,
                ],
            }
        )
    )[:16]


def requests(rows: list[dict[str, Any]], cfg: TrainConfig, episode: int) -> list[GenerationRequest]:
    r = cfg.raft
    spec = prompt_spec(cfg, rows)
    out = []
    for i, row in enumerate(rows):
        n = row["num_candidates"]
        out.append(
            GenerationRequest(
                request_id=f"raft:{episode}:{i}",
                messages=_messages(row, i, cfg, spec),
                n=r.num_generations,
                temperature=r.temperature,
                top_p=r.top_p,
                max_tokens=r.budget,
                seed=derive_seed(cfg.optim.seed, episode, row.get("instance_id") or i),
                # constrained decoding writes the box the prompt asks for
                answer_choices=answer_choices(n, spec.answer_format)
                if r.constrain_answer
                else None,
            )
        )
    return out


def sample_episode(
    cfg: TrainConfig,
    episode: int,
    model: str,
    rows: list[dict[str, Any]],
    reqs: list[GenerationRequest] | None = None,
) -> list[dict[str, Any]]:
    """Every response of the episode, read and marked correct or not (samples.jsonl rows).
    `reqs`: one request per row instead of the plain ones (STaR's hinted prompts)."""
    from pipeline.sampling.backends.factory import make_backend
    from pipeline.sampling.config import ModelSource

    reqs = requests(rows, cfg, episode) if reqs is None else reqs
    source = ModelSource(
        name=f"raft-episode-{episode}", model=model, tier="weak", backend=cfg.raft.backend
    )
    got: dict[str, Any] = {}
    with make_backend(source) as backend:
        for result in backend.generate(reqs, progress=sys.stderr.isatty()):
            got[result.request_id] = result.generations
    samples = []
    for i, (req, row) in enumerate(zip(reqs, rows, strict=True)):
        gens = got.get(req.request_id)
        if gens is None or len(gens) != req.n:
            raise RuntimeError(
                f"raft episode {episode}: the backend returned no/short result for row {i}"
            )
        pre = prefill(req.messages or [])
        for s, g in enumerate(gens):
            text = pre + g.text  # the whole assistant turn, as the rewards and evaluation read it
            failed = g.finish_reason.startswith("error")
            answer = None if failed else parse_answer(text, row["num_candidates"])
            samples.append(
                {
                    "row": i,
                    "instance_id": row.get("instance_id"),
                    "sample": s,
                    "response": text,
                    "answer": answer,
                    # `A` or `[[A]]` rows (publish.answer_format: bracketed)
                    "correct": answer == gold_letter(row["chosen_answer"]),
                    "finish_reason": g.finish_reason,
                    "completion_tokens": g.completion_tokens,
                }
            )
    return samples


def keep_correct(
    samples: list[dict[str, Any]], keep_per_prompt: int, seed: int, episode: int
) -> list[dict[str, Any]]:
    """At most `keep_per_prompt` correct responses per row, drawn at random (seeded); the wrong
    ones are dropped: RAFT never learns from a negative."""
    by_row: dict[int, list[dict[str, Any]]] = {}
    for s in samples:
        if s["correct"]:
            by_row.setdefault(s["row"], []).append(s)
    rng = random.Random(derive_seed(seed, "raft-keep", episode))
    kept = []
    for row in sorted(by_row):
        good = by_row[row]
        kept += good if len(good) <= keep_per_prompt else rng.sample(good, keep_per_prompt)
    return sorted(kept, key=lambda s: (s["row"], s["sample"]))


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _reuse(
    cfg: TrainConfig, episode: int, fingerprint: str, rows: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict] | None:
    """The episode's samples and stats when they were drawn with these settings, else None."""
    folder = episode_dir(cfg, episode)
    stats_path, samples_path = folder / STATS_FILE, folder / SAMPLES_FILE
    if not (stats_path.exists() and samples_path.exists()):
        return None
    stats = json.loads(stats_path.read_text())
    if stats.get("fingerprint") != fingerprint:
        log.info("raft episode %d: settings changed, sampling again", episode)
        return None
    samples = [json.loads(x) for x in samples_path.read_text().splitlines() if x.strip()]
    log.info("raft episode %d: reusing %d samples in %s", episode, len(samples), folder)
    return _with_rows(samples, rows), stats


def generate(
    cfg: TrainConfig, episode: int, model: str, draw: Any = None
) -> tuple[list[dict[str, Any]], dict]:
    """The episode's samples and stats: read back when drawn already with the same settings,
    else drawn now (and the episode's stale training state removed). `draw`: another way to
    draw them (STaR's), with `_draw`'s arguments."""
    draw = _draw if draw is None else draw
    fingerprint = generation_fingerprint(cfg, episode, model)
    rows = episode_rows(cfg)
    if (found := _reuse(cfg, episode, fingerprint, rows)) is not None:
        return found
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        # Several training processes: the main one samples while the others wait, then they
        # read its files. (Untested here: no multi-GPU machine. Sample with a vLLM backend so
        # the wait stays short.)
        from accelerate import PartialState

        state = PartialState()
        with state.main_process_first():
            if state.is_main_process:
                drawn = draw(cfg, episode, model, rows, fingerprint)
        if state.is_main_process:
            return drawn
        found = _reuse(cfg, episode, fingerprint, rows)
        if found is None:
            raise RuntimeError(f"raft episode {episode}: the main process wrote no samples")
        return found
    return draw(cfg, episode, model, rows, fingerprint)


def _draw(
    cfg: TrainConfig, episode: int, model: str, rows: list[dict[str, Any]], fingerprint: str
) -> tuple[list[dict[str, Any]], dict]:
    folder = episode_dir(cfg, episode)
    _forget_training(cfg, episode)
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    samples = sample_episode(cfg, episode, model, rows)
    elapsed = time.perf_counter() - start
    kept = keep_correct(samples, cfg.raft.keep_per_prompt, cfg.optim.seed, episode)
    kept_ids = {(s["row"], s["sample"]) for s in kept}
    for s in samples:
        s["kept"] = (s["row"], s["sample"]) in kept_ids
    stats = episode_stats(samples, rows, kept, episode, model, fingerprint, elapsed)
    write_episode(folder, samples, stats)
    return _with_rows(samples, rows), stats


def episode_stats(
    samples: list[dict[str, Any]],
    rows: list[dict[str, Any]],
    kept: list[dict[str, Any]],
    episode: int,
    model: str,
    fingerprint: str,
    generation_s: float,
) -> dict[str, Any]:
    """An episode's stats.json: counts, generated tokens, sampling wall time."""
    return {
        "episode": episode,
        "model": model,
        "fingerprint": fingerprint,
        "prompts": len(rows),
        "responses": len(samples),
        "failed_generations": sum(s["finish_reason"].startswith("error") for s in samples),
        "correct": sum(s["correct"] for s in samples),
        "prompts_with_correct": len({s["row"] for s in samples if s["correct"]}),
        "rows_kept": len(kept),
        "generated_tokens": sum(s["completion_tokens"] or 0 for s in samples),
        "generation_s": generation_s,
    }


def write_episode(folder: Path, samples: list[dict[str, Any]], stats: dict[str, Any]) -> None:
    """samples.jsonl and stats.json, each written whole or not at all."""
    _write_atomic(folder / SAMPLES_FILE, "".join(json.dumps(s) + "\n" for s in samples))
    _write_atomic(folder / STATS_FILE, json.dumps(stats, indent=2) + "\n")
    log.info(
        "episode %d: %d of %d responses correct, %d of %d prompts with one; %d rows kept",
        stats["episode"], stats["correct"], stats["responses"], stats["prompts_with_correct"],
        stats["prompts"], stats["rows_kept"],
    )  # fmt: skip


def _with_rows(samples: list[dict[str, Any]], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if any(s["row"] >= len(rows) for s in samples):
        raise ValueError(
            "raft: samples.jsonl names rows the data no longer has; delete the episode"
        )
    return samples


def _forget_training(cfg: TrainConfig, episode: int) -> None:
    """New samples make the episode's checkpoints stale: remove them before training again."""
    last = episode == cfg.raft.episodes - 1
    for name in ("checkpoints", "final", "merged", "summary.json" if last else DONE_FILE):
        path = train_dir(cfg, episode) / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


def sft_dataset(cfg: TrainConfig, rows: list[dict[str, Any]], samples: list[dict]) -> Dataset:
    """The kept responses as prompt-completion rows (the prefill leads the completion)."""
    spec = prompt_spec(cfg, rows)
    data = []
    for s in samples:
        if not s.get("kept"):
            continue
        i = s["row"]
        prompt, completion = prompt_and_response(rows[i], i, spec, s["response"])
        data.append({"prompt": prompt, "completion": completion})
    return Dataset.from_list(data)


def episode_sft_args(cfg: TrainConfig) -> dict[str, Any]:
    """The SFTConfig fields of an episode (besides the shared TrainingArguments ones)."""
    return {"max_length": cfg.raft.max_length, **cfg.raft.trl_args()}


def train_dir(cfg: TrainConfig, episode: int) -> Path:
    """Where an episode's checkpoints and model go: the run's own folder for the last one."""
    return cfg.output_dir if episode == cfg.raft.episodes - 1 else episode_dir(cfg, episode)


def episode_trainer(
    cfg: TrainConfig,
    episode: int,
    model: str,
    callbacks: list[Any],
    *,
    train_model: str | None = None,
    draw: Any = None,
) -> Any:
    """The SFTTrainer of one episode (samples drawn first when they are not on disk): it
    fine-tunes `train_model` (default: `model`, the one sampled from) on the kept responses."""
    from trl import SFTConfig, SFTTrainer

    from pipeline.train.verifier import sequence_trainer

    samples, stats = generate(cfg, episode, model, draw)
    if stats["rows_kept"] == 0:
        raise NothingToLearnError(
            f"raft episode {episode}: none of the {stats['responses']} responses to "
            f"{stats['prompts']} prompts picked the gold letter, so there is nothing to learn "
            f"from ({stats['failed_generations']} generations failed). An untrained or random "
            "model rarely writes a valid box: raise raft.num_generations, or for a demo set "
            "raft.constrain_answer: true"
        )
    dataset = sft_dataset(cfg, episode_rows(cfg), samples)
    ep_cfg = cfg.model_copy(
        update={"model": train_model or model, "output_dir": train_dir(cfg, episode)}
    )
    return sequence_trainer(
        SFTTrainer, SFTConfig, ep_cfg, episode_sft_args(cfg), dataset, callbacks
    )


def run_earlier_episodes(cfg: TrainConfig, make_trainer: Any = None) -> str:
    """Train every episode but the last (each from the one before); returns the model the last
    episode starts from. A finished episode (its done.json) is skipped. `make_trainer`: another
    episode trainer (STaR's), with `episode_trainer`'s arguments."""
    make_trainer = episode_trainer if make_trainer is None else make_trainer
    model = cfg.model
    for episode in range(cfg.raft.episodes - 1):
        folder = episode_dir(cfg, episode)
        done = folder / DONE_FILE
        if done.exists():
            model = json.loads(done.read_text())["model_path"]
            continue
        metrics = JsonlMetricsCallback(folder / METRICS_FILE)
        trainer = make_trainer(cfg, episode, model, [metrics])
        start = time.perf_counter()
        trainer.train(resume_from_checkpoint=last_checkpoint(folder / "checkpoints"))
        runtime = time.perf_counter() - start
        ep_cfg = cfg.model_copy(update={"model": model, "output_dir": folder})
        model = str(save_final(trainer, ep_cfg))
        if trainer.accelerator.is_main_process:
            record = {"model_path": model, "global_step": trainer.state.global_step,
                      "train_runtime_s": runtime}  # fmt: skip
            _write_atomic(done, json.dumps(record, indent=2) + "\n")
        del trainer
        _free_memory()
    return model


def _free_memory() -> None:
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:  # pragma: no cover - torch is a training dependency
        pass


def build_raft(cfg: TrainConfig, callbacks: list[Any]) -> Any:
    """The last episode's trainer, after every earlier episode has run (run.train trains it)."""
    model = run_earlier_episodes(cfg)
    return episode_trainer(cfg, cfg.raft.episodes - 1, model, callbacks)


def raft_summary(cfg: TrainConfig) -> dict[str, Any]:
    """Per-episode counts and what sampling cost (read from the episodes' stats.json)."""
    episodes = []
    for e in range(cfg.raft.episodes):
        path = episode_dir(cfg, e) / STATS_FILE
        if path.exists():
            stats = json.loads(path.read_text())
            done = episode_dir(cfg, e) / DONE_FILE
            if done.exists():
                metrics = read_metrics(episode_dir(cfg, e) / METRICS_FILE)
                tokens = next(
                    (r["num_tokens"] for r in reversed(metrics) if r.get("num_tokens")), 0
                )
                stats |= {"train": json.loads(done.read_text()) | {"tokens": tokens}}
            episodes.append(stats)
    return {
        "episodes": episodes,
        "generated_tokens": sum(s["generated_tokens"] for s in episodes),
        "generation_s": sum(s["generation_s"] for s in episodes),
        "earlier_episodes_train_s": sum(
            s.get("train", {}).get("train_runtime_s", 0.0) for s in episodes
        ),
        "earlier_episodes_tokens": sum(s.get("train", {}).get("tokens", 0) for s in episodes),
    }
