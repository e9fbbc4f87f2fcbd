"""`aletheia train --show-example N` on every config in configs/train and one cell of every zoo
recipe: the fixture dataset folder and the R1-Distill-like tiny tokenizer (r1_like.py) stand in
for the published data and the real model, as the other training tests do. Think-style
sequence configs show the thinking inside the loss tokens, after a prompt that ends in the
`<think>\\n` prefill; the tokenizer alone is loaded. (That the shown tokens are the trainers'
own is tests/train/test_think_kept.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pipeline.train.recipes import grid
from tests.train.r1_like import ASSISTANT, EOS

REPO = Path(__file__).resolve().parents[2]
CONFIGS = sorted((REPO / "configs" / "train").glob("*.yaml"))
SEQUENCE_METHODS = ("dpo", "sft", "raft", "star", "restem")
# what the loss shows after `<think>\n`: DPO / SFT the fixture's chosen response, RAFT / STaR /
# ReST-EM the illustrative one (they sample their own while training)
REASONING = {"dpo": "reads both numbers", "sft": "reads both numbers",
             "raft": "(the model's reasoning", "star": "(the model's reasoning",
             "restem": "(the model's reasoning"}  # fmt: skip


def _show(args: list[str], data: Path, model: Path, out: Path) -> str:
    from aletheia.cli import app

    res = CliRunner().invoke(
        app,
        ["train", *args, "--show-example", "2", "--data", str(data), "--model", str(model),
         "--out", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    return res.output


def _check(output: str, method: str, style: str) -> None:
    assert output.count("=== example ") == 2, output[:400]
    if method in SEQUENCE_METHODS:
        loss = "--- chosen:" if method == "dpo" else "--- completion:"
        assert output.count(loss) == 2
        if style == "think":
            for section in output.split(loss)[1:]:
                text = section.split("\n", 1)[1].split("\n--- ")[0].split("\n\n===")[0]
                # the reasoning and its closing tag are loss tokens, and EOS ends them
                assert REASONING[method] in text and "</think>" in text, text
                assert text.rstrip().endswith(EOS)
            assert output.count(f"{ASSISTANT}<think>\n\n{loss}") == 2  # the prompt's end
    else:
        assert "completion: sampled during training" in output
        if method == "grpo" and style == "think":
            assert output.count(f"{ASSISTANT}<think>\n") == 2


@pytest.mark.parametrize("config", CONFIGS, ids=[c.stem for c in CONFIGS])
def test_show_example_on_every_train_config(
    config: Path, tmp_path: Path, dataset_dir: Path, r1_like_model_dir: Path
) -> None:
    raw = yaml.safe_load(config.read_text())
    out = _show(["-c", str(config)], dataset_dir, r1_like_model_dir, tmp_path)
    _check(out, raw["method"], (raw.get("prompt") or {}).get("style", "think"))


def _one_cell_per_recipe() -> list:
    seen: dict[str, object] = {}
    for cell in grid():
        seen.setdefault(cell.recipe, cell)
    return list(seen.values())


@pytest.mark.parametrize("cell", _one_cell_per_recipe(), ids=lambda c: c.name)
def test_show_example_on_a_cell_of_every_zoo_recipe(
    cell, tmp_path: Path, dataset_dir: Path, r1_like_model_dir: Path
) -> None:
    from pipeline.train.recipes import cell_config

    args = ["--recipe", cell.recipe, "--size", cell.size]
    args += ["--budget", cell.budget] if cell.budget else []
    args += ["--lora"] if cell.lora else []
    out = _show(args, dataset_dir, r1_like_model_dir, tmp_path)
    cfg = cell_config(cell, data_dir=dataset_dir, output_dir=tmp_path)
    _check(out, cfg.method, cfg.prompt.style)


def test_show_example_loads_no_weights(
    tmp_path: Path, dataset_dir: Path, r1_like_model_dir: Path
) -> None:
    """The tokenizer is enough: a model folder without its weights shows the same examples."""
    import shutil

    no_weights = tmp_path / "no-weights"
    shutil.copytree(r1_like_model_dir, no_weights, ignore=shutil.ignore_patterns("*.safetensors"))
    config = REPO / "configs" / "train" / "dpo_think.yaml"
    assert _show(["-c", str(config)], dataset_dir, no_weights, tmp_path) == _show(
        ["-c", str(config)], dataset_dir, r1_like_model_dir, tmp_path
    ).replace(str(r1_like_model_dir), str(no_weights))


def test_show_example_without_the_data_says_what_to_build(tmp_path: Path) -> None:
    """One line, before any training library loads (the demo's folder is not built here)."""
    from tests.test_aletheia_cli import _aletheia, _one_error_line

    config = REPO / "configs" / "train" / "demo-dpo.yaml"
    line = _one_error_line(*_aletheia("train", "-c", str(config), "--show-example", "1",
                                      cwd=tmp_path))  # fmt: skip
    assert "data.dir: no such folder out/demo/hub" in line
    assert "; build it first (aletheia build-train --config configs/demo.yaml)" in line


def test_show_example_says_where_max_length_cuts(
    tmp_path: Path, dataset_dir: Path, r1_like_model_dir: Path
) -> None:
    """A max_length inside the first SFT sequence trains the loss tokens before it; one
    inside the prompt leaves none (TRL drops the row)."""
    import re

    from transformers import AutoTokenizer

    config = str(REPO / "configs" / "train" / "sft_think.yaml")

    def first(max_length: int) -> str:
        out = _show(["-c", config, "--set", f"sft.max_length={max_length}"], dataset_dir,
                    r1_like_model_dir, tmp_path)  # fmt: skip
        return out.split("=== example 2")[0]

    whole = first(4096)
    prompt = int(re.search(r"--- prompt: (\d+) tokens", whole).group(1))
    loss, total = map(
        int, re.search(r"(\d+) loss tokens; (\d+) tokens with the prompt", whole).groups()
    )
    assert total == prompt + loss and "not cut" in whole
    body = whole.split(" not cut ---\n", 1)[1].rstrip("\n")
    limit = prompt + loss // 2
    cut = first(limit)
    assert (
        f"{loss} loss tokens; CUT: {total} tokens with the prompt > max_length {limit}; the last "
        f"{total - limit} loss tokens are not trained on" in cut
    )
    tok = AutoTokenizer.from_pretrained(r1_like_model_dir)
    kept = tok.decode(tok(body, add_special_tokens=False)["input_ids"][: loss // 2])
    assert cut.split("are not trained on ---\n", 1)[1].rstrip("\n") == kept
    assert first(prompt).count("CUT: the prompt alone fills max_length") == 1
