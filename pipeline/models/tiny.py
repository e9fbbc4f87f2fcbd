"""Build a tiny randomly initialised Qwen2 model with a tokenizer trained on the fly.

No weights can be downloaded here (and CI has no GPU), so tests, the demo and
benchmarks exercise every model code path with this: a real transformers model
and a real byte-level BPE tokenizer with a ChatML chat template. Its outputs are
random text, but they are honestly generated.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# A little text with the shapes the tiny model will see: prose, code, fences, \boxed{X}.
_SEED_CORPUS = [
    "Read two integers a and b from standard input and print their sum.",
    "def solve():\n    n = int(input())\n    print(n * (n + 1) // 2)\n",
    "#include <bits/stdc++.h>\nusing namespace std;\nint main() { long long a, b; cin >> a >> b; cout << a + b << endl; }\n",
    "import java.util.*;\npublic class Main { public static void main(String[] args) { Scanner s = new Scanner(System.in); System.out.println(s.nextInt()); } }\n",
    "```python\nprint(sum(map(int, input().split())))\n```",
    "Let me check each candidate against the tests. Candidate B handles the edge case. \\boxed{B}",
    "<think>\nCandidate A overflows; candidate C is correct.\n</think>\nThe answer is \\boxed{C}",
    "Answer: \\boxed{A} \\boxed{D} \\boxed{E}",
]


def build_tiny_model(
    out_dir: str | Path,
    *,
    seed: int = 0,
    vocab_size: int = 1024,
    hidden_size: int = 64,
    num_layers: int = 2,
    extra_corpus: Iterable[str] = (),
) -> Path:
    """Write a tiny Qwen2 model + tokenizer into `out_dir`, or reuse the one built there with
    the same settings (TINY_MODEL run by the stage runner: pipeline/models/stage.py)."""
    from pipeline.models.stage import TinyModelCall, tiny_model

    call = TinyModelCall(
        seed=seed,
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        num_layers=num_layers,
        extra_corpus=tuple(extra_corpus),
    )
    return tiny_model(call, Path(out_dir))


def write_tiny_model(
    out: Path,
    *,
    seed: int,
    vocab_size: int,
    hidden_size: int,
    num_layers: int,
    extra_corpus: Iterable[str],
) -> Path:
    """Build the model and tokenizer into `out`, unconditionally (TINY_MODEL's body)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    from pipeline.common.cpu import building_models

    out.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(list(_SEED_CORPUS) + list(extra_corpus), trainer=trainer)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        unk_token=None,
    )
    tok.chat_template = CHATML_TEMPLATE
    tok.save_pretrained(out)

    config = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=num_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.convert_tokens_to_ids("<|im_start|>"),
    )
    # Seeding and initialising under one lock: the global RNG and transformers' build
    # patches are process-wide (pipeline/common/cpu.py).
    with building_models():
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(out)
    (out / "aletheia_tiny.json").write_text(json.dumps({"seed": seed, "random_init": True}))
    return out
