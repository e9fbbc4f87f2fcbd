"""The transformers backend's `generate` decoder (batched_generate.py) on the tiny random Qwen2
(CPU): batch planning and EOS cuts worked out by hand, the same greedy text as the loop,
seeded repeats, sampling only from the top-p nucleus, and out-of-memory splits."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

import pytest
import torch

from pipeline.sampling.backends.base import GenerationRequest
from pipeline.sampling.backends.batched_generate import (
    kv_bytes_per_token,
    plan_batches,
    split_completion,
)
from pipeline.sampling.backends.transformers_backend import TransformersBackend
from tests.sampling.sharp_model import sharpen


@dataclass
class Row:
    prompt_ids: list[int]
    temperature: float = 0.6
    top_p: float = 0.95
    max_tokens: int = 10
    seed: int = 0


def test_plan_groups_settings_sorts_longest_first_and_keeps_both_limits() -> None:
    rows = [
        Row([1] * 5),  # 0: cost per row 5 + 10 = 15
        Row([1] * 30),  # 1: 40
        Row([1] * 5),  # 2: 15
        Row([1] * 20, temperature=0.0),  # 3: other settings
        Row([1] * 10),  # 4: 20
        Row([1] * 30),  # 5: 40
        Row([1] * 10),  # 6: 20
    ]
    # Sorted longest first: 1, 5 (40 each), 4, 6 (20), 0, 2 (15); ties keep their order.
    # Budget 80: [1, 5] = 2 x 40; [4, 6, 0] = 3 x 20 (60; a 4th would be 80, but batch_size 3);
    # [2] alone. Row 3 has its own settings.
    assert plan_batches(rows, batch_size=3, max_batch_tokens=80) == [[1, 5], [4, 6, 0], [2], [3]]
    # No token limit: only the row count splits.
    assert plan_batches(rows, batch_size=4, max_batch_tokens=None) == [[1, 5, 4, 6], [0, 2], [3]]
    # A row over the budget on its own still gets a batch.
    assert plan_batches([Row([1] * 50), Row([1] * 2)], batch_size=8, max_batch_tokens=30) == [
        [0],
        [1],
    ]
    with pytest.raises(ValueError, match="batch_size"):
        plan_batches(rows, batch_size=0, max_batch_tokens=None)


def test_completion_is_cut_at_the_first_eos_which_is_left_out() -> None:
    assert split_completion([5, 6, 2, 7, 0, 0], {2, 0}) == ([5, 6], "stop")
    assert split_completion([2, 0, 0], {2}) == ([], "stop")
    assert split_completion([5, 6, 7], {2}) == ([5, 6, 7], "length")


def test_kv_bytes_per_token_of_a_qwen2_shape() -> None:
    from transformers import Qwen2Config

    # The throughput model: hidden 512, 4 heads of 128, 2 KV heads, 4 layers, bf16:
    # keys + values = 2 x 4 layers x 2 heads x 128 x 2 bytes = 4096.
    config = Qwen2Config(
        hidden_size=512, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=4
    )
    assert kv_bytes_per_token(config, 2) == 4096


def _chat(rid: str, text: str, **kw) -> GenerationRequest:
    return GenerationRequest(request_id=rid, messages=[{"role": "user", "content": text}], **kw)


def _texts(backend, reqs) -> dict[str, list[tuple[str, str, int | None]]]:
    return {
        r.request_id: [(g.text, g.finish_reason, g.completion_tokens) for g in r.generations]
        for r in backend.generate(reqs, progress=False)
    }


@pytest.fixture(scope="module")
def sharp_model_dir(tiny_model_dir, tmp_path_factory):
    return sharpen(tiny_model_dir, tmp_path_factory.mktemp("sharp-model"))


@pytest.fixture(scope="module")
def loop(sharp_model_dir):
    with TransformersBackend(sharp_model_dir, device="cpu", batch_size=3) as b:
        yield b


@pytest.fixture(scope="module")
def fast(sharp_model_dir):
    with TransformersBackend(
        sharp_model_dir, device="cpu", batch_size=4, decoder="generate", max_batch_tokens=400
    ) as b:
        yield b


def _greedy_requests() -> list[GenerationRequest]:
    """Prompts of 4 lengths with one budget (batched together, padded), and one other budget."""
    return [
        _chat(f"g{i}", "Read two integers and print the sum. " * (1 + 2 * i), n=2, temperature=0,
              max_tokens=12)
        for i in range(4)
    ] + [GenerationRequest(request_id="raw", prompt="def solve():", temperature=0, max_tokens=9)]  # fmt: skip


def test_greedy_text_is_the_loops_whatever_the_batches(loop, fast) -> None:
    """Different prompt lengths, budgets and batch shapes (the loop: 3 rows a batch; generate:
    4 rows and 400 tokens), the same greedy continuations, finish reasons and token counts."""
    want = _texts(loop, _greedy_requests())
    assert _texts(fast, _greedy_requests()) == want
    # prompt-dependent text: a mispadded or mispositioned prompt would change it
    assert len({gens[0][0] for gens in want.values()}) == len(want)


def _sampled_tokens(backend, req) -> list[int]:
    """The completion tokens of the request's one sample, read off the decoder itself."""
    [row] = backend._rows_for(0, req)
    if backend.decoder == "generate":
        return backend._generate_decoder.decode([row])[0].tokens
    backend._decode_batch([row])
    return row.tokens


@pytest.mark.parametrize("decoder", ["loop", "generate"])
def test_an_eos_stops_a_row_there_and_is_left_out(loop, fast, decoder) -> None:
    """Sample a completion, make one of its tokens (its first occurrence, past the 2nd) an EOS,
    sample again with the same seed: the completion stops there, without it."""
    backend = {"loop": loop, "generate": fast}[decoder]
    req = GenerationRequest(
        request_id="e", prompt="int main() {", temperature=1.0, max_tokens=12, seed=3
    )
    tokens = _sampled_tokens(backend, req)
    assert len(tokens) == 12  # the random model ran to the budget
    k = next(i for i in range(2, 12) if tokens[i] not in tokens[:i])
    saved = set(backend.eos_ids)
    backend.eos_ids.add(tokens[k])  # the generate decoder shares this set
    try:
        [res] = backend.generate([req], progress=False)
    finally:
        backend.eos_ids.clear()
        backend.eos_ids.update(saved)
    g = res.generations[0]
    assert (g.text, g.finish_reason, g.completion_tokens) == (
        backend._decode(tokens[:k]),
        "stop",
        k,
    )


def test_sampling_repeats_for_a_seed_and_leaves_the_callers_random_state(fast) -> None:
    reqs = [_chat("s", "Sum two ints.", n=3, temperature=1.0, max_tokens=16, seed=4)]
    torch.manual_seed(123)
    state = torch.get_rng_state()
    first = _texts(fast, reqs)
    assert torch.equal(torch.get_rng_state(), state)
    assert _texts(fast, reqs) == first
    assert len({t for t, _, _ in first["s"]}) == 3  # three samples, three texts
    other = _texts(fast, [_chat("s", "Sum two ints.", n=3, temperature=1.0, max_tokens=16, seed=5)])
    assert other != first


def test_samples_come_from_the_top_p_nucleus_only(fast, monkeypatch) -> None:
    """200 one-token samples of one prompt at T=1: with top_p=1 they spread over many tokens (a
    checkpoint's top_k=1 in its generation_config is set aside); with top_p=0.05 every one is
    a token of the nucleus worked out from the logits."""
    prompt = "Which candidate is correct?"
    ids = fast.encode(prompt)
    with torch.inference_mode():
        logits = fast.model(input_ids=torch.tensor([ids])).logits[0, -1].float()
    probs = torch.softmax(logits, -1)
    nucleus, mass = [], 0.0
    for tok in probs.argsort(descending=True).tolist():  # the smallest top set of mass 0.05
        nucleus.append(tok)
        mass += float(probs[tok])
        if mass >= 0.05:
            break
    monkeypatch.setattr(fast, "batch_size", 200)  # the 200 samples in one batch
    fast.model.generation_config.top_k = 1  # a checkpoint default that must not leak in
    try:

        def first_tokens(top_p: float) -> list[str]:
            req = GenerationRequest(
                request_id="p", prompt=prompt, n=200, temperature=1.0, top_p=top_p, max_tokens=1
            )
            [res] = fast.generate([req], progress=False)
            return [g.text for g in res.generations]

        wide, narrow = first_tokens(1.0), first_tokens(0.05)
    finally:
        fast.model.generation_config.top_k = None
    assert len(set(wide)) > 20  # a near-uniform random model: top-k 1 would give one token
    assert len(nucleus) >= 2
    assert set(narrow) <= {fast._decode([t]) for t in nucleus}
    assert len(set(narrow)) >= 2


def test_constrained_requests_still_take_the_loop(fast) -> None:
    reqs = [
        _chat(f"v{i}", "Pick one.", n=2, max_tokens=6, seed=i, answer_choices=["A", "B", "C"])
        for i in range(2)
    ] + [_chat("free", "Pick one.", n=2, max_tokens=6, seed=9)]
    out = _texts(fast, reqs)
    for rid in ("v0", "v1"):
        for text, _, _ in out[rid]:
            assert re.search(r"\\boxed\{[ABC]\}$", text), text
    assert len(out["free"]) == 2


def test_a_batch_out_of_gpu_memory_is_split_and_later_batches_follow(fast, monkeypatch) -> None:
    """A test double stands in for the GPU's memory limit (no GPU here): the decoder's
    `generate` call raises torch's out-of-memory error for batches of more than 2 rows."""
    decoder = fast._generate_decoder
    real = decoder._generate
    sizes: list[int] = []

    handling: list[bool] = []

    def limited(rows):
        sizes.append(len(rows))
        # A retry must not run inside the failed attempt's `except`: its traceback would
        # keep that attempt's tensors alive (the GPU memory the retry needs).
        handling.append(sys.exc_info()[0] is not None)
        if len(rows) > 2:
            raise torch.OutOfMemoryError("CUDA out of memory (test double)")
        return real(rows)

    reqs = [
        _chat(f"o{i}", f"Sum two ints {i}.", n=2, temperature=0, max_tokens=8) for i in range(4)
    ]
    want = _texts(fast, reqs)  # two planned batches of 4 rows (batch_size 4)
    monkeypatch.setattr(decoder, "_generate", limited)
    try:
        got = _texts(fast, reqs)
    finally:
        decoder.rows_that_fit = None
    assert got == want  # greedy: the same text however the batches were cut
    # the first batch failed and was split; the second was cut to 2 rows before it ran
    assert sizes == [4, 2, 2, 2, 2]
    assert not any(handling), handling


def _padded(rows: list[Row], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(r.prompt_ids) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, width - len(r.prompt_ids) :] = torch.tensor(r.prompt_ids)
        mask[i, width - len(r.prompt_ids) :] = 1
    return ids, mask


def _reference_generate(backend, rows: list[Row], seed: int) -> list[list[int]]:
    """transformers' own `model.generate` on the same left-padded batch, seed and settings
    (temperature, top-p, no top-k, the budget, the EOS ids): the decoder's reference."""
    from transformers import GenerationConfig

    ids, mask = _padded(rows, backend.pad_id)
    first = rows[0]
    sampling = (
        {"do_sample": True, "temperature": first.temperature, "top_p": first.top_p, "top_k": 0}
        if first.temperature > 0
        else {"do_sample": False}
    )
    config = GenerationConfig(
        max_new_tokens=first.max_tokens, pad_token_id=backend.pad_id,
        eos_token_id=sorted(backend.eos_ids), **sampling,
    )  # fmt: skip
    own = backend.model.generation_config
    backend.model.generation_config = GenerationConfig(
        pad_token_id=backend.pad_id, eos_token_id=sorted(backend.eos_ids)
    )
    try:
        with torch.random.fork_rng(), torch.inference_mode():
            torch.manual_seed(seed)
            out = backend.model.generate(
                input_ids=ids, attention_mask=mask, generation_config=config
            )
    finally:
        backend.model.generation_config = own
    new = out[:, ids.shape[1] :]
    # generate stops when every row is done; the decoder fills the whole budget with pads
    pad = torch.full((len(rows), first.max_tokens - new.shape[1]), backend.pad_id)
    return torch.cat([new, pad], 1).tolist()


def _decoder(backend, **kw):
    from pipeline.sampling.backends.batched_generate import GenerateDecoder

    return GenerateDecoder(
        backend.model, pad_id=backend.pad_id, eos_ids=backend.eos_ids, device=backend.device, **kw
    )


def _decode(decoder, rows: list[Row], seed: int) -> list[list[int]]:
    ids, mask = _padded(rows, decoder.pad_id)
    first = rows[0]
    with torch.random.fork_rng(), torch.inference_mode():
        torch.manual_seed(seed)
        out = decoder._decode_padded(ids, mask, first.temperature, first.top_p, first.max_tokens)
    return out.tolist()


def _rows(fast, temperature: float, top_p: float = 0.9, max_tokens: int = 14) -> list[Row]:
    texts = ["Sum two ints.", "Read n, print n squared. " * 3, "def f(x):", "Pick one " * 5]
    return [
        Row(fast.encode(t), temperature=temperature, top_p=top_p, max_tokens=max_tokens)
        for t in texts
        for _ in range(2)
    ]


@pytest.mark.parametrize(("temperature", "top_p"), [(1.0, 0.9), (0.7, 1.0), (0.0, 1.0)])
def test_the_decoder_draws_the_tokens_generate_draws(fast, temperature, top_p) -> None:
    """The same left-padded batch of prompts of four lengths, seed and settings: exactly the
    tokens transformers' `model.generate` gives (sampled at two settings, and greedy), with
    the prompt run through the model whole or in slices of 3 columns (rows x 3 tokens)."""
    rows = _rows(fast, temperature, top_p)
    want = _reference_generate(fast, rows, seed=11)
    whole = _decode(_decoder(fast), rows, seed=11)
    sliced = _decode(_decoder(fast, prefill_tokens=3 * len(rows)), rows, seed=11)
    assert whole == want
    assert sliced == want
    assert len({tuple(t) for t in want}) > 1  # prompt-dependent: a mixed-up row would show


def test_rows_that_finished_leave_the_batch_and_the_others_write_the_same(fast) -> None:
    """Greedy rows, two of the prompts' continuations cut short by an EOS: dropping finished
    rows from the cache (looked at every step, at the first finished row) leaves every row's
    tokens as they were with no dropping, and the later steps run with fewer rows."""
    rows = _rows(fast, temperature=0.0, max_tokens=16)
    full = _decode(_decoder(fast, compact_share=2.0), rows, seed=0)
    # an EOS: a token one prompt's greedy continuation writes early, another's never
    eos = next(
        tok for tok in full[0][1:6] if tok not in full[-1] and tok not in fast.eos_ids
    )
    saved = set(fast.eos_ids)
    fast.eos_ids.add(eos)
    sizes: list[int] = []
    hook = fast.model.register_forward_pre_hook(
        lambda _m, _a, kw: sizes.append(kw["input_ids"].shape[0]), with_kwargs=True
    )
    try:
        kept = _decode(_decoder(fast, compact_share=2.0), rows, seed=0)
        sizes.clear()
        dropped = _decode(_decoder(fast, check_every=1, compact_share=0.01), rows, seed=0)
    finally:
        hook.remove()
        fast.eos_ids.clear()
        fast.eos_ids.update(saved)
    assert dropped == kept
    cut = [split_completion(t, fast.eos_ids | {eos}) for t in kept]
    assert any(reason == "stop" and len(toks) < 15 for toks, reason in cut)
    assert any(reason == "length" for _, reason in cut)  # not every row stopped
    assert sizes[0] == len(rows) and min(sizes) < len(rows)
    assert sizes == sorted(sizes, reverse=True)


def test_the_cache_is_reserved_for_full_attention_and_left_alone_for_sliding_windows() -> None:
    """A full-attention Qwen2: every layer holds the batch's length from the start, written in
    place (what it returns is what was written, in order), and one 4-D mask serves all; with
    sliding-window layers those keep transformers' own layer and masks."""
    from transformers import Qwen2Config

    from pipeline.sampling.backends.batched_generate import reserved_cache, reserved_layer_class

    full = Qwen2Config(num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                       num_key_value_heads=2)  # fmt: skip
    cache, own_mask = reserved_cache(full, 7)
    assert own_mask and all(isinstance(x, reserved_layer_class()) for x in cache.layers)
    layer = cache.layers[0]
    a, b = torch.randn(3, 2, 4, 16), torch.randn(3, 2, 1, 16)
    keys, values = layer.update(a, -a)
    assert torch.equal(keys, a) and torch.equal(values, -a)
    keys, values = layer.update(b, -b)
    assert torch.equal(keys, torch.cat([a, b], 2)) and layer.get_seq_length() == 5
    layer.batch_select_indices(torch.tensor([2, 0]))
    assert torch.equal(layer.keys, torch.cat([a, b], 2)[[2, 0]])
    with pytest.raises(ValueError, match="7 positions"):
        layer.update(torch.randn(2, 2, 3, 16), torch.randn(2, 2, 3, 16))
    sliding = Qwen2Config(num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                          num_key_value_heads=2, use_sliding_window=True, sliding_window=4,
                          max_window_layers=1)  # fmt: skip
    cache, own_mask = reserved_cache(sliding, 7)
    assert not own_mask
    assert isinstance(cache.layers[0], reserved_layer_class())
    assert not isinstance(cache.layers[1], reserved_layer_class())
