"""The transformers backend on the tiny random Qwen2 (CPU): seeding, limits, constrained answers."""

from __future__ import annotations

import re

import pytest
import torch

from pipeline.sampling.backends.base import GenerationRequest
from pipeline.sampling.backends.transformers_backend import BOXED_OPEN, TransformersBackend

CHOICES = ["A", "B", "C", "D", "E"]


@pytest.fixture(scope="module")
def backend(tiny_model_dir):
    with TransformersBackend(tiny_model_dir, device="cpu", batch_size=4) as b:
        yield b


def _chat(rid: str, text: str, **kw) -> GenerationRequest:
    return GenerationRequest(request_id=rid, messages=[{"role": "user", "content": text}], **kw)


def _run(backend, reqs):
    return {r.request_id: r for r in backend.generate(reqs, progress=False)}


def test_seeded_requests_repeat_and_respect_n_and_limits(backend):
    reqs = [
        _chat("a", "Print the sum of two integers.", n=3, max_tokens=24, seed=7),
        GenerationRequest(request_id="b", prompt="def solve():", n=2, max_tokens=16, seed=8),
    ]
    first, second = _run(backend, reqs), _run(backend, reqs)
    assert set(first) == {"a", "b"}
    assert [g.text for g in first["a"].generations] == [g.text for g in second["a"].generations]
    assert len(first["a"].generations) == 3 and len(first["b"].generations) == 2
    # distinct sample indices draw from distinct streams
    assert len({g.text for g in first["a"].generations}) > 1
    for res in first.values():
        assert res.backend == "transformers" and res.model_revision.startswith("local:")
        for g in res.generations:
            assert g.finish_reason in {"stop", "length"}
            assert 0 < g.completion_tokens <= 24 and g.prompt_tokens > 0
            if g.finish_reason == "length":
                assert g.completion_tokens == (24 if res.request_id == "a" else 16)
    other = _run(
        backend, [_chat("a", "Print the sum of two integers.", n=3, max_tokens=24, seed=9)]
    )
    assert [g.text for g in other["a"].generations] != [g.text for g in first["a"].generations]


def test_text_does_not_depend_on_batch_company(backend):
    req = _chat("solo", "Read n and print n squared.", n=2, max_tokens=20, seed=3)
    alone = _run(backend, [req])["solo"]
    crowd = _run(
        backend,
        [req, _chat("x", "a much longer prompt " * 10, n=3, max_tokens=5, seed=1)],
    )["solo"]
    assert [g.text for g in alone.generations] == [g.text for g in crowd.generations]


@pytest.mark.parametrize("choices", [None, CHOICES])
def test_a_requests_samples_read_its_prompt_once(tiny_model_dir, choices):
    """The n samples of a request share one pass over the prompt (its cache copied per
    sample), and write what each of them writes decoded on its own."""
    req = _chat("p", "Read n and print n squared. " * 6, n=4, max_tokens=12, seed=5,
                answer_choices=choices, temperature=1.0)  # fmt: skip
    prompt_passes: list[tuple[int, int]] = []
    texts = {}
    for batch_size in (4, 1):
        with TransformersBackend(tiny_model_dir, device="cpu", batch_size=batch_size) as b:
            forward = b.model.forward

            def spy(*args, _forward=forward, _bs=batch_size, **kwargs):
                ids = kwargs.get("input_ids")
                if ids is not None and ids.shape[1] > 1:  # a pass over prompts, not a step
                    prompt_passes.append((_bs, ids.shape[0]))
                return _forward(*args, **kwargs)

            b.model.forward = spy
            texts[batch_size] = [g.text for g in _run(b, [req])["p"].generations]
    # together: one row read once; alone: each sample reads it in its own batch of one
    assert prompt_passes == [(4, 1)] + [(1, 1)] * 4
    assert texts[4] == texts[1] and len(set(texts[4])) > 1


def test_greedy_is_the_argmax_continuation(backend, tiny_model_dir):
    req = GenerationRequest(request_id="g", prompt="int main() {", temperature=0, max_tokens=8)
    text = _run(backend, [req])["g"].generations[0].text
    ids = backend.encode("int main() {")
    with torch.inference_mode():
        for _ in range(8):
            nxt = int(backend.model(input_ids=torch.tensor([ids])).logits[0, -1].argmax())
            if nxt in backend.eos_ids:
                break
            ids.append(nxt)
    assert text == backend._decode(ids[len(backend.encode("int main() {")) :])


@pytest.mark.parametrize("max_tokens", [1, 12, 40])
def test_answer_choices_always_end_in_a_boxed_choice(backend, max_tokens):
    reqs = [
        _chat(
            f"v{i}",
            f"Pick the correct candidate {i}.",
            n=3,
            max_tokens=max_tokens,
            seed=i,
            answer_choices=CHOICES[: 2 + i],
        )
        for i in range(3)
    ]
    for rid, res in _run(backend, reqs).items():
        allowed = CHOICES[: 2 + int(rid[1:])]
        for g in res.generations:
            m = re.search(r"\\boxed\{([^}]*)\}$", g.text)
            assert m and m.group(1) in allowed, g.text
            assert g.text.count(BOXED_OPEN) == 1
            assert g.completion_tokens <= max(max_tokens, 1 + 3 + 1 + 1)


def test_choice_is_the_models_own_greedy_pick(backend):
    """At temperature 0 the answer is the argmax of the model's logits over the choices' tokens."""
    req = _chat(
        "c", "Which candidate is correct?", temperature=0, max_tokens=10, answer_choices=CHOICES
    )
    text = _run(backend, [req])["c"].generations[0].text
    head = text[: text.rindex(BOXED_OPEN) + len(BOXED_OPEN)]
    prompt_ids = backend.encode(backend.render_prompt(req))
    free_ids = backend.encode(head[: -len(BOXED_OPEN)])
    ids = prompt_ids + free_ids + backend.encode(BOXED_OPEN)
    with torch.inference_mode():
        logits = backend.model(input_ids=torch.tensor([ids])).logits[0, -1]
    first_tokens = [backend.encode(c)[0] for c in CHOICES]
    best = CHOICES[max(range(len(CHOICES)), key=lambda i: float(logits[first_tokens[i]]))]
    # re-tokenising the free text may differ from the sampled tokens; compare only when it matches
    if backend.encode(head[: -len(BOXED_OPEN)]) == free_ids:
        assert text.endswith("\\boxed{" + best + "}")


@pytest.fixture(scope="module")
def boxy_backend(tmp_path_factory):
    """A tiny model whose tokenizer learnt `{\\` : a token that runs on past an opened box."""
    from pipeline.models.tiny import build_tiny_model

    corpus = ["\\boxed{\\text{A}} \\boxed{\\text{B}} {\\ {\\ {\\"] * 30
    path = build_tiny_model(tmp_path_factory.mktemp("boxy"), extra_corpus=corpus)
    with TransformersBackend(path, device="cpu", batch_size=4) as b:
        yield b


def test_text_past_a_box_the_model_opened_is_masked_out(boxy_backend):
    """The model writes `\\boxed{` itself inside a token that runs on (`{\\`): the overrun is cut
    and masked out of the cache, and the choice is the one a clean forward pass prefers."""
    backend = boxy_backend
    req = _chat("m", "Which one?", temperature=0, max_tokens=30, answer_choices=CHOICES)
    row = backend._rows_for(0, req)[0]
    written = backend.encode("so " + BOXED_OPEN + "\\text{C} and more")
    assert "{\\" in [backend._decode([t]) for t in written]  # the straddling token exists
    # Stand in for the model writing those tokens as its free text.
    row.forced = written
    companion = backend._rows_for(1, _chat("n", "padding " * 6, temperature=0, max_tokens=6))[0]
    backend._decode_batch([row, companion])
    out = backend._finish(row)
    assert row.masked_total >= 1  # the straddling token was really cut
    assert out.text.startswith("so " + BOXED_OPEN) and out.text.count(BOXED_OPEN) == 1
    chosen = out.text[len("so " + BOXED_OPEN) : -1]
    assert chosen in CHOICES and out.finish_reason == "stop"
    n_tail = len(backend.encode(chosen)) + len(backend.encode("}"))
    context = row.prompt_ids + row.tokens[:-n_tail]
    assert backend._decode(row.tokens[:-n_tail]) == "so " + BOXED_OPEN
    with torch.inference_mode():
        logits = backend.model(input_ids=torch.tensor([context])).logits[0, -1]
    first_tokens = [backend.encode(c)[0] for c in CHOICES]
    best = max(range(len(CHOICES)), key=lambda i: float(logits[first_tokens[i]]))
    assert chosen == CHOICES[best]


def test_prompt_longer_than_the_model_is_an_error_generation(backend):
    req = GenerationRequest(request_id="long", prompt="x " * 10, max_tokens=backend.max_positions)
    res = _run(backend, [req])["long"]
    assert res.generations[0].finish_reason.startswith("error:prompt_too_long")


def test_assistant_prefill_is_continued(backend):
    """A trailing assistant turn (the verifier's `<think>\\n`) is continued, not closed."""
    user = [{"role": "user", "content": "Which candidate is correct?"}]
    plain = backend.render_prompt(GenerationRequest(request_id="u", messages=user))
    assert plain.endswith("<|im_start|>assistant\n")
    req = GenerationRequest(
        request_id="p",
        messages=user + [{"role": "assistant", "content": "<think>\n"}],
        n=1,
        max_tokens=8,
        seed=0,
    )
    rendered = backend.render_prompt(req)
    assert rendered.endswith("<|im_start|>assistant\n<think>\n")
    assert rendered.count("<|im_end|>") == 1  # the user turn's only
    [res] = backend.generate([req], progress=False)
    assert not res.generations[0].text.startswith("<think>")  # the pre-fill is not repeated


def test_weights_are_bf16_on_a_gpu_and_fp32_on_a_cpu_unless_asked(backend, tiny_model_dir):
    """The default dtype per device (a CUDA device object needs no GPU to be named), what a
    CPU backend loads and reports, and an explicit dtype by name."""
    from pipeline.sampling.backends.transformers_backend import default_dtype

    assert default_dtype("cuda") == torch.bfloat16
    assert default_dtype(torch.device("cuda", 1)) == torch.bfloat16
    assert default_dtype("cpu") == torch.float32
    assert next(backend.model.parameters()).dtype == torch.float32
    assert backend.describe()["dtype"] == "float32"
    with TransformersBackend(tiny_model_dir, device="cpu", dtype="bfloat16") as b16:
        assert next(b16.model.parameters()).dtype == torch.bfloat16
        assert b16.describe()["dtype"] == "bfloat16"
