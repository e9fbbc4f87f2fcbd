"""The published DPO configs are TRL conversational preference data: `load_dataset` on the
folder gives rows TRL reads as conversational, the card's own TRL snippet trains a step
with them (tiny random Qwen2, CPU), and, with a template that keeps an assistant turn,
TRL's sequences are the ones the project's trainer trains on, the prompt being what the
verifier saw before it generated (the Think pre-fill continued)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from pipeline.publish import build_hub_folder


def _trl_snippet(card: str) -> str:
    """The card's Python block that trains with DPOTrainer."""
    blocks = re.findall(r"```python\n(.*?)```", card, re.DOTALL)
    [code] = [b for b in blocks if "DPOTrainer" in b]
    return code


def _tokens(dataset: Any) -> list[tuple[list[int], list[int], list[int]]]:
    return [(r["prompt_ids"], r["chosen_ids"], r["rejected_ids"]) for r in dataset]


@pytest.mark.usefixtures("hf_offline_env")
def test_card_trl_snippet_trains_the_dpo_config_as_conversational_data(
    build_dir: Path, tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import trl
    from transformers import AutoTokenizer
    from trl.data_utils import is_conversational

    from pipeline.common.verifier_prompt import THINK_PREFILL
    from pipeline.train.config import TrainConfig
    from pipeline.train.data import render_prefilled
    from pipeline.train.verifier import build_dpo

    hub = tmp_path / "hub"
    build_hub_folder(build_dir, hub)
    code = _trl_snippet((hub / "README.md").read_text())
    assert f'load_dataset("{hub}", "dpo", split="train")' in code
    # The snippet names a real verifier model; here it trains the tiny local one, one step
    # on the CPU (TRL's config keeps the snippet's own settings, the test's on top).
    code, n = re.subn(r'model="[^"]+"', f'model="{tiny_model_dir}"', code)
    assert n == 1
    real_config = trl.DPOConfig
    test_args = {"output_dir": str(tmp_path / "trl"), "max_steps": 1, "report_to": "none",
                 "per_device_train_batch_size": 2, "use_cpu": True, "bf16": False,
                 "save_strategy": "no"}  # fmt: skip
    monkeypatch.setattr(trl, "DPOConfig", lambda **kw: real_config(**(kw | test_args)))
    monkeypatch.chdir(tmp_path)  # the snippet runs as a reader would run it
    scope: dict[str, Any] = {}
    exec(compile(code, "card-trl-snippet", "exec"), scope)  # noqa: S102 - the card's snippet

    pairs, trainer = scope["pairs"], scope["trainer"]
    assert all(is_conversational(r) for r in pairs)  # TRL applies the chat template
    assert trainer.state.global_step == 1
    # The project's trainer on the same folder trains on the same tokens, pair by pair.
    ours_config = TrainConfig.model_validate(
        {"method": "dpo", "model": str(tiny_model_dir), "output_dir": tmp_path / "ours",
         "data": {"dir": hub, "config": "dpo"},
         "optim": {"max_steps": 1, "per_device_train_batch_size": 2, "bf16": False,
                   "use_cpu": True}}
    )  # fmt: skip
    ours = build_dpo(ours_config, [])
    theirs = _tokens(trainer.train_dataset)
    assert len(theirs) == len(ours.train_dataset) == pairs.num_rows
    # This template keeps an assistant turn as written, so TRL's conversational path trains on
    # the project's sequence: the same tokens up to EOS; TRL's loss also covers the pre-fill
    # and the template's newline after EOS, the project's starts after the pre-fill (the
    # prompt generation continues) and ends on EOS.
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    newline = tok("\n", add_special_tokens=False)["input_ids"]
    for (p, c, r), (op, oc, orej) in zip(theirs, _tokens(ours.train_dataset), strict=True):
        for full, own in ((p + c, op + oc), (p + r, op + orej)):
            assert full[: len(own)] == own and own[-1] == tok.eos_token_id
            assert full[len(own) :] == newline
    # The prompt is the context generation saw: the chat template's generation prompt, then
    # the response's first tokens continue the pre-fill.
    for row, (prompt_ids, chosen_ids, rejected_ids) in zip(pairs, theirs, strict=True):
        seen = render_prefilled(
            row["prompt"] + [{"role": "assistant", "content": THINK_PREFILL}], tok
        )
        for ids, turn in ((chosen_ids, row["chosen"]), (rejected_ids, row["rejected"])):
            text = tok.decode(prompt_ids + ids)
            assert text.startswith(seen)
            assert turn[0]["content"] in text  # the whole turn, the pre-fill once
