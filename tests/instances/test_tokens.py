"""The prompt-length cap counts the same tokens batched as one row at a time.

Real parts: the tiny model's byte-level BPE fast tokenizer (trained on the fly, with a
ChatML chat template) and the real assembly step that drops long prompts.
"""

from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pytest

from pipeline.instances.assemble import _drop_long_prompts
from pipeline.instances.config import AssembleConfig
from pipeline.instances.tokens import TokenCounter

WORDS = ["read", "the", "array", "sort", "print", "sum", "of", "pairs", "modulo", "graph", "tree"]


def _rows(n: int, seed: int = 0) -> list[tuple[str, list[str], list[str]]]:
    """Rows of very different lengths, so a cap between them keeps some and drops others."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        k = rng.randint(2, 5)
        query = f"Problem {i}: " + " ".join(rng.choices(WORDS, k=rng.randint(5, 400)))
        cands = [
            "def f(x):\n" + "    x += 1\n" * rng.randint(1, 120) + "    return x\n"
            for _ in range(k)
        ]
        langs = [rng.choice(["python", "cpp", "java"]) for _ in range(k)]
        rows.append((query, cands, langs))
    return rows


@pytest.fixture(scope="module")
def counter(tiny_model_dir: Path) -> TokenCounter:
    return TokenCounter(str(tiny_model_dir))


@pytest.mark.parametrize("batch_size", [1, 3, 256])
def test_batched_counts_equal_one_row_at_a_time(counter: TokenCounter, batch_size: int) -> None:
    rows = _rows(37)
    one_by_one = [counter.prompt_tokens(q, c, lang) for q, c, lang in rows]
    batched = counter.prompt_tokens_many(rows, batch_size=batch_size)
    assert batched == one_by_one
    assert len(set(batched)) > 10  # the table really spans many lengths


def test_count_texts_matches_single_calls(counter: TokenCounter) -> None:
    texts = ["", "a", "print(1)\n" * 50, "ünïcødé ✓ " * 20]
    singles = [len(counter.tokenizer(t)["input_ids"]) for t in texts]
    assert counter.count_texts(texts, batch_size=3) == singles


def test_prompt_cap_keeps_the_same_rows(counter: TokenCounter) -> None:
    rows = _rows(60, seed=1)
    lengths = [counter.prompt_tokens(q, c, lang) for q, c, lang in rows]
    cap = sorted(lengths)[len(lengths) // 2]
    want_kept = {i for i, n in enumerate(lengths) if n <= cap}
    inst = pl.DataFrame(
        {
            "row": list(range(len(rows))),
            "query": [r[0] for r in rows],
            "candidates": [r[1] for r in rows],
            "candidate_languages": [r[2] for r in rows],
        }
    )
    stats: dict = {}
    kept = _drop_long_prompts(inst, counter, AssembleConfig(max_prompt_tokens=cap), stats)
    assert set(kept.get_column("row").to_list()) == want_kept
    assert stats["dropped_prompt_too_long"] == len(rows) - len(want_kept) > 0


def test_a_template_that_opens_the_think_block_is_not_given_a_second_one(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """R1-Distill's generation prompt ends in `<think>\\n`, the Think prefill itself: the
    measured prompt is what the model sees (one `<think>\\n`, as at inference), so the 4,096
    cap counts it once. A template without it (ChatML) still gets the prefill appended."""
    from pipeline.common.verifier_prompt import build_messages
    from tests.train.r1_like import ASSISTANT, make_r1_like

    r1 = TokenCounter(str(make_r1_like(tiny_model_dir, tmp_path / "r1")))
    chatml = TokenCounter(str(tiny_model_dir))
    messages = build_messages("Add two numbers.", ["print(1)", "print(2)"], ["python"] * 2)
    assert messages[-1] == {"role": "assistant", "content": "<think>\n"}  # Think's prefill

    text = r1.render(messages)
    assert text.endswith(ASSISTANT + "<think>\n") and text.count("<think>") == 1
    assert text == r1.tokenizer.apply_chat_template(
        messages[:-1], tokenize=False, add_generation_prompt=True
    )
    plain = chatml.render(messages)
    assert plain.endswith("<think>\n") and plain.count("<think>") == 1
    assert plain.startswith(
        chatml.tokenizer.apply_chat_template(
            messages[:-1], tokenize=False, add_generation_prompt=True
        )
    )
