"""The thinking is kept in every trained sequence, whatever the model's chat template.

The model is the tiny one with a tokenizer that behaves as DeepSeek-R1-Distill-Qwen's
(tests/train/r1_like.py): its template renders an assistant turn as only the text after its
last `</think>`, writes BOS itself beside the tokenizer's own, and its pad token is EOS. With
it, TRL's conversational tokenization trains on `\\boxed{X}` alone (the first test shows it);
the project's trainers (DPO, SFT, RAFT, STaR, ReST-EM) are real TRL trainers here, and their
loss tokens, decoded, are each response as written after the `<think>\\n` prefill, then EOS.
What `aletheia train --show-example` prints is checked against the trainers' own tokens.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.common.hub_folder import read_config
from pipeline.common.verifier_prompt import PromptSpec
from pipeline.train import TrainConfig, train
from pipeline.train.show_example import showing
from tests.train.r1_like import ASSISTANT, BOS, EOS, USER, make_r1_like

CPU = {"max_steps": 1, "per_device_train_batch_size": 2, "bf16": False, "use_cpu": True,
       "learning_rate": 1e-4, "warmup_ratio": 0.0, "save_steps": 1,
       "dataloader_drop_last": False}  # fmt: skip
SAMPLER = {"max_completion_length": 16, "max_length": 1024,
           "backend": {"type": "transformers", "device": "cpu"}}  # fmt: skip
PROMPT_END = ASSISTANT + "<think>\n"


def _config(tmp_path: Path, model: Path, data: Path, method: str, config: str, **more: Any):
    return TrainConfig.model_validate(
        {"method": method, "model": str(model), "output_dir": tmp_path / method,
         "data": {"dir": data, "config": config, "limit": 4}, "optim": dict(CPU)} | more
    )  # fmt: skip


def _decode(tok: Any, ids: list[int]) -> str:
    return tok.decode(ids, skip_special_tokens=False)


def _check_prompt(tok: Any, ids: list[int]) -> None:
    """One BOS (the template's and the tokenizer's not doubled); ends as generation sees it."""
    text = _decode(tok, ids)
    assert ids[0] == tok.bos_token_id and ids.count(tok.bos_token_id) == 1
    assert text.startswith(BOS + USER) and text.endswith(PROMPT_END), text[-80:]
    assert "Hint:" not in text


def _loss(example: dict) -> tuple[list[int], list[int]]:
    """(prompt ids, loss ids) of a prepared SFT example (labels -100 on the prompt)."""
    labels, ids = example["labels"], example["input_ids"]
    start = next(i for i, label in enumerate(labels) if label != -100)
    assert all(label != -100 for label in labels[start:])
    assert labels[start:] == ids[start:]
    return ids[:start], ids[start:]


def test_the_stand_in_template_drops_the_reasoning_in_trls_conversational_path(
    tmp_path: Path, r1_like_model_dir: Path, dataset_dir: Path
) -> None:
    """Why the project renders sequences itself: TRL's own tokenization of the published
    conversational rows, with this template, leaves the reasoning out of the loss."""
    from transformers import AutoTokenizer
    from trl import DPOConfig, DPOTrainer

    from pipeline.train.data import preference_rows
    from pipeline.train.sequences import template_behaviour

    tok = AutoTokenizer.from_pretrained(r1_like_model_dir)
    assert template_behaviour(tok) == "drops"
    rows = preference_rows(read_config(dataset_dir, "dpo", 2), PromptSpec("think"))
    trainer = DPOTrainer(
        model=str(r1_like_model_dir), train_dataset=rows, processing_class=tok,
        args=DPOConfig(output_dir=str(tmp_path), use_cpu=True, bf16=False, report_to=[]),
    )  # fmt: skip
    for row, ex in zip(rows, trainer.train_dataset, strict=True):
        chosen = _decode(tok, ex["chosen_ids"])
        assert "</think>" in row["chosen"][0]["content"]
        assert "</think>" not in chosen and "reads both numbers" not in chosen
        assert chosen.endswith("\\boxed{" + row["chosen"][0]["content"][-2] + "}" + EOS)


def test_dpo_chosen_and_rejected_tokens_hold_the_thinking(
    tmp_path: Path, r1_like_model_dir: Path, dataset_dir: Path
) -> None:
    from pipeline.train.verifier import build_dpo

    cfg = _config(tmp_path, r1_like_model_dir, dataset_dir, "dpo", "dpo",
                  dpo={"max_length": 1024})  # fmt: skip
    trainer = build_dpo(cfg, [])
    tok = trainer.processing_class
    published = read_config(dataset_dir, "dpo", 4).to_pylist()
    assert len(trainer.train_dataset) == len(published) == 4
    for row, ex in zip(published, trainer.train_dataset, strict=True):
        _check_prompt(tok, ex["prompt_ids"])
        for field in ("chosen", "rejected"):
            body = row[field][0]["content"]
            assert body.startswith("<think>\n") and "\n</think>\n" in body
            assert _decode(tok, ex[f"{field}_ids"]) == body.removeprefix("<think>\n") + EOS
            assert ex[f"{field}_ids"][-1] == tok.eos_token_id
    assert tok.pad_token == "<|vision_pad|>" != tok.eos_token  # R1's pad is EOS: not here
    shown = showing(cfg, 4).examples
    assert [(e.prompt_ids, e.parts["chosen"], e.parts["rejected"]) for e in shown] == [
        (ex["prompt_ids"], ex["chosen_ids"], ex["rejected_ids"]) for ex in trainer.train_dataset
    ]
    trainer.train()  # the rendered rows train (one step, pairs of different lengths padded)
    assert trainer.state.global_step == 1


def test_sft_on_chosen_responses_trains_on_the_thinking(
    tmp_path: Path, r1_like_model_dir: Path, dataset_dir: Path
) -> None:
    """SFT-Think, and GenRM-like fine-tuning on the DPO config's chosen responses."""
    from pipeline.train.verifier import build_sft

    cfg = _config(tmp_path, r1_like_model_dir, dataset_dir, "sft", "dpo",
                  sft={"max_length": 1024})  # fmt: skip
    trainer = build_sft(cfg, [])
    tok = trainer.processing_class
    published = read_config(dataset_dir, "dpo", 4).to_pylist()
    seen = []
    for row, ex in zip(published, trainer.train_dataset, strict=True):
        prompt, loss = _loss(ex)
        _check_prompt(tok, prompt)
        body = row["chosen"][0]["content"]
        assert _decode(tok, loss) == body.removeprefix("<think>\n") + EOS
        seen.append((prompt, loss))
    shown = showing(cfg, 4).examples
    assert [(e.prompt_ids, e.parts["completion"]) for e in shown] == seen


def test_sft_on_its_own_chat_dataset_keeps_the_thinking(
    tmp_path: Path, r1_like_model_dir: Path, dataset_dir: Path
) -> None:
    """`sft.dataset` rows (Aletheia's cold-start shape: a chat whose last turn is the
    assistant's, reasoning in think tags), with and without the `<think>\\n` opening."""
    from pipeline.train.verifier import build_sft

    turns = [
        "<think>\nThe loop stops one short, so B misses the last test.\n</think>\n\\boxed{A}",
        "Analysis: A and C agree; C overflows.\n</think>\nFinal Answer: \\boxed{A}",
    ]
    folder = tmp_path / "coldstart"
    folder.mkdir()
    chats = [
        {"messages": [{"role": "user", "content": f"Question {i}"},
                      {"role": "assistant", "content": t}]}
        for i, t in enumerate(turns)
    ]  # fmt: skip
    (folder / "train.jsonl").write_text("".join(json.dumps(c) + "\n" for c in chats))
    cfg = _config(tmp_path, r1_like_model_dir, dataset_dir, "sft", "dpo",
                  sft={"max_length": 1024, "dataset": str(folder)})  # fmt: skip
    trainer = build_sft(cfg, [])
    tok = trainer.processing_class
    seen = []
    for turn, ex in zip(turns, trainer.train_dataset, strict=True):
        prompt, loss = _loss(ex)
        # either way the prompt ends as generation sees it (this template opens the think block)
        assert _decode(tok, prompt).endswith(PROMPT_END)
        assert _decode(tok, loss) == turn.removeprefix("<think>\n") + EOS
        seen.append((prompt, loss))
    assert [(e.prompt_ids, e.parts["completion"]) for e in showing(cfg, 2).examples] == seen

    # Text rows (prompt + completion strings) go to TRL as written; TRL adds the EOS.
    (folder / "train.jsonl").write_text(
        "".join(
            json.dumps({"prompt": f"Q{i}: ", "completion": t}) + "\n" for i, t in enumerate(turns)
        )
    )
    trainer = build_sft(cfg, [])
    shown = showing(cfg, 2).examples
    for turn, ex, e in zip(turns, trainer.train_dataset, shown, strict=True):
        loss = _decode(tok, _loss(ex)[1])
        assert turn in loss and loss.endswith(turn + EOS)
        assert (e.prompt_ids, e.parts["completion"]) == _loss(ex)


def _write_episode(cfg: TrainConfig, responses: list[tuple[int, str, bool]]) -> None:
    """Episode 0's samples on disk, as sampling writes them, so the episode trainer reuses
    them: (row, response, hinted) per kept correct response."""
    from pipeline.train import raft

    rows = raft.episode_rows(cfg)
    samples = [
        {"row": i, "instance_id": rows[i]["instance_id"], "sample": s, "response": text,
         "answer": rows[i]["chosen_answer"], "correct": True, "kept": True,
         "finish_reason": "stop", "completion_tokens": 12}
        | ({"hinted": hinted} if cfg.method == "star" else {})
        for s, (i, text, hinted) in enumerate(responses)
    ]  # fmt: skip
    fingerprint = raft.generation_fingerprint(cfg, 0, cfg.model)
    stats = raft.episode_stats(samples, rows, samples, 0, cfg.model, fingerprint, 0.0)
    folder = raft.episode_dir(cfg, 0)
    folder.mkdir(parents=True)
    raft.write_episode(folder, samples, stats)


@pytest.mark.parametrize("method", ["raft", "star", "restem"])
def test_self_training_episodes_train_on_the_thinking(
    method: str, tmp_path: Path, r1_like_model_dir: Path, dataset_dir: Path
) -> None:
    from pipeline.train import raft
    from pipeline.train.self_training import as_raft, star_episode_trainer

    cfg = _config(tmp_path, r1_like_model_dir, dataset_dir, method, "train", **{method: SAMPLER})
    view = as_raft(cfg)
    rows = raft.episode_rows(view)
    think = "<think>\nCandidate {} passes every test I run.\n</think>\n\\boxed{{{}}}"
    responses = [
        (i, think.format(r["chosen_answer"], r["chosen_answer"]), method == "star" and i == 3)
        for i, r in enumerate(rows)
    ]
    _write_episode(view, responses)
    make = star_episode_trainer if method == "star" else raft.episode_trainer
    trainer = make(view, 0, cfg.model, [])
    tok = trainer.processing_class
    seen = []
    for (_, text, _), ex in zip(responses, trainer.train_dataset, strict=True):
        prompt, loss = _loss(ex)
        _check_prompt(tok, prompt)  # a hinted response trains under the plain prompt
        assert _decode(tok, loss) == text.removeprefix("<think>\n") + EOS
        seen.append((prompt, loss))
    shown = showing(cfg, 4)
    assert all("sampled in episode 0" in (e.note or "") for e in shown.examples)
    assert [(e.prompt_ids, e.parts["completion"]) for e in shown.examples] == seen


def test_grpo_think_prompt_is_the_trained_sequences_prompt(
    r1_like_model_dir: Path, dataset_dir: Path
) -> None:
    """GRPO-Think's prompt (its completions are sampled, no template touches them) is the
    prompt the sequence trainers put before each response: one BOS, ending in `<think>\\n`."""
    from transformers import AutoTokenizer

    from pipeline.train.data import preference_rows, verifier_prompt_rows
    from pipeline.train.sequences import as_text

    tok = AutoTokenizer.from_pretrained(r1_like_model_dir)
    table = read_config(dataset_dir, "dpo", 4)
    grpo = verifier_prompt_rows(table, PromptSpec("think"), tok)
    dpo = as_text(preference_rows(table, PromptSpec("think")), tok)
    assert grpo["prompt"] == dpo["prompt"]
    for prompt in grpo["prompt"]:
        _check_prompt(tok, tok(text=prompt)["input_ids"])


# A template that, as Qwen3's does, writes an empty think block into the last assistant turn
# when that turn holds no `</think>` (our own Jinja, not Qwen3's text).
REWRITES_LAST_TURN = (
    "{%- for m in messages -%}"
    "{%- if m['role'] == 'assistant' and loop.last and '</think>' not in m['content'] -%}"
    "{{- '<|im_start|>assistant\\n<think>\\n\\n</think>\\n\\n' + m['content'] + '<|im_end|>\\n' -}}"
    "{%- else -%}{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' -}}"
    "{%- endif -%}{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)


def test_a_template_that_rewrites_the_prefill_turn_does_not_reach_the_prompt(
    tiny_model_dir: Path, dataset_dir: Path
) -> None:
    """The Think prompt is the generation prompt followed by `<think>\\n`, as generation sees
    it: a template that rewrites a final assistant turn (an empty think block in front, as
    Qwen3's) does not put that block into GRPO's, the sequence trainers' or the cap's prompt."""
    from transformers import AutoTokenizer

    from pipeline.common.verifier_prompt import build_messages
    from pipeline.train.data import preference_rows, verifier_prompt_rows
    from pipeline.train.sequences import as_text

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    tok.chat_template = REWRITES_LAST_TURN
    messages = build_messages("Add.", ["print(1)", "print(2)"], ["python"] * 2)
    rewritten = tok.apply_chat_template(messages, tokenize=False, continue_final_message=True)
    assert "<think>\n\n</think>" in rewritten  # what rendering the prefill as a turn gives

    table = read_config(dataset_dir, "dpo", 4)
    grpo = verifier_prompt_rows(table, PromptSpec("think"), tok)
    dpo = as_text(preference_rows(table, PromptSpec("think")), tok)
    assert grpo["prompt"] == dpo["prompt"]
    for prompt in grpo["prompt"]:
        assert prompt.endswith("<|im_start|>assistant\n<think>\n")
        assert "</think>" not in prompt and prompt.count("<think>") == 1


def test_a_pair_whose_turns_disagree_on_the_prefill_is_named(tiny_model_dir: Path) -> None:
    """ChatML's generation prompt does not open the think block: the pair has no one prompt."""
    from datasets import Dataset
    from transformers import AutoTokenizer

    from pipeline.train.sequences import as_text

    prompt = [{"role": "user", "content": "Which one?"}]
    row = {"prompt": prompt,
           "chosen": [{"role": "assistant", "content": "<think>\nA.\n</think>\n\\boxed{A}"}],
           "rejected": [{"role": "assistant", "content": "\\boxed{B}"}]}  # fmt: skip
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    with pytest.raises(ValueError, match=r"row 0: field rejected: chosen and rejected must both"):
        as_text(Dataset.from_list([row]), tok)


def test_the_pad_token_is_never_eos(
    tmp_path: Path, tiny_model_dir: Path, r1_like_model_dir: Path
) -> None:
    from pipeline.train.tokenizer import training_tokenizer

    assert training_tokenizer(str(tiny_model_dir)).pad_source == "model"  # <|endoftext|>
    named = training_tokenizer(str(r1_like_model_dir))  # pad = EOS, as R1-Distill's
    assert (named.pad_source, named.tokenizer.pad_token) == ("vocabulary", "<|vision_pad|>")
    chosen = training_tokenizer(str(r1_like_model_dir), pad_token="<|endoftext|>")
    assert (chosen.pad_source, chosen.tokenizer.pad_token) == ("config", "<|endoftext|>")
    with pytest.raises(ValueError, match="not in .* vocabulary"):
        training_tokenizer(str(r1_like_model_dir), pad_token="<|nope|>")

    bare = make_r1_like(tiny_model_dir, tmp_path / "bare", pad_named=False)
    special = training_tokenizer(str(bare))  # no pad-named token, no spare embedding row
    assert (special.pad_source, special.tokenizer.pad_token) == ("special", "<|endoftext|>")
    config = json.loads((bare / "config.json").read_text())
    (bare / "config.json").write_text(json.dumps(config | {"vocab_size": config["vocab_size"] + 8}))
    spare = training_tokenizer(str(bare))  # a spare embedding row takes a new token
    assert (spare.pad_source, spare.tokenizer.pad_token) == ("added", "<|pad|>")
    assert len(spare.tokenizer) <= config["vocab_size"] + 8


def test_the_pad_token_is_published_with_the_model(
    tmp_path: Path, tiny_model_dir: Path, dataset_dir: Path
) -> None:
    """A tokenizer whose pad is EOS trains with another pad (here a special token the template
    never writes), and the trained model is saved with it; its embeddings keep their shape."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    bare = make_r1_like(tiny_model_dir, tmp_path / "bare", pad_named=False)
    rows = json.loads((bare / "config.json").read_text())["vocab_size"]
    cfg = _config(tmp_path, bare, dataset_dir, "dpo", "dpo",
                  dpo={"max_length": 1024, "precompute_ref_log_probs": False})  # fmt: skip
    summary = train(cfg)
    assert summary["global_step"] == 1
    tok = AutoTokenizer.from_pretrained(summary["model_path"])
    model = AutoModelForCausalLM.from_pretrained(summary["model_path"])
    assert tok.pad_token == "<|endoftext|>" and tok.eos_token == EOS
    assert model.config.pad_token_id == tok.pad_token_id != tok.eos_token_id
    assert model.get_input_embeddings().weight.shape[0] == rows == len(tok)
