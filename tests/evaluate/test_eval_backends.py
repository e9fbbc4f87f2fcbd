"""evaluate() through any sampling backend: the config and `--backend` forms, the generate
decoder against the loop, a real OpenAI-compatible server on 127.0.0.1 (`transformers serve`),
and the offline vLLM worker's process path (its transformers engine)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aletheia.cli import app
from pipeline.evaluate import EvalConfig, evaluate
from pipeline.evaluate.config import EVAL_BATCH_ROWS, backend_option
from pipeline.sampling.backends.base import Backend
from pipeline.sampling.config import OpenAIOptions, TransformersOptions, VLLMOptions
from tests.sampling.serving import start_transformers_serve
from tests.sampling.sharp_model import sharpen

# 2 instances a split, K=2, 3 pairs each (the fixture's lists have 3 candidates): 5 responses
# an instance, 40 in all.
SMALL = {"k": 2, "limit": 2, "max_new_tokens": 8, "progress": False}
RESPONSES = 4 * 2 * (2 + 3)


def test_the_default_is_the_generate_decoder_and_old_fields_move_into_it() -> None:
    default = EvalConfig().backend
    assert isinstance(default, TransformersOptions)
    assert (default.decoder, default.batch_size) == ("generate", EVAL_BATCH_ROWS)
    assert EVAL_BATCH_ROWS >= 2496  # the demo's evaluation sequences: one batch on a GPU
    old = EvalConfig.model_validate({"batch_size": 64, "device": "cpu"}).backend
    assert isinstance(old, TransformersOptions)
    assert (old.decoder, old.batch_size, old.device) == ("generate", 64, "cpu")
    # transformers options given as a mapping start from the evaluation's defaults
    mapped = EvalConfig.model_validate({"backend": {"type": "transformers", "device": "cpu"}})
    assert mapped.backend.decoder == "generate"  # type: ignore[union-attr]
    assert EvalConfig.model_validate(mapped.model_dump()) == mapped  # report.json's config reloads
    with pytest.raises(ValueError, match="batch_size: set them inside backend"):
        EvalConfig.model_validate({"batch_size": 8, "backend": {"type": "vllm"}})


def test_backend_option_reads_a_type_a_url_or_a_mapping() -> None:
    t = backend_option("transformers")
    assert isinstance(t, TransformersOptions) and t.decoder == "generate"
    url = backend_option("http://127.0.0.1:8000/v1")
    assert isinstance(url, OpenAIOptions) and url.base_url == "http://127.0.0.1:8000/v1"
    mapping = backend_option("{type: openai, base_url: 'http://127.0.0.1:9/v1', concurrency: 64}")
    assert isinstance(mapping, OpenAIOptions) and mapping.concurrency == 64
    loop = backend_option("{type: transformers, decoder: loop, batch_size: 8}")
    assert isinstance(loop, TransformersOptions) and (loop.decoder, loop.batch_size) == ("loop", 8)
    assert isinstance(backend_option("vllm"), VLLMOptions)
    with pytest.raises(ValueError, match="give exactly one of base_url or serve"):
        backend_option("openai")
    with pytest.raises(ValueError, match="give transformers, vllm, a server URL or a YAML"):
        backend_option("fast")
    with pytest.raises(ValueError, match="--backend .*concurrency"):
        backend_option("{type: openai, base_url: 'http://x', concurrency: 0}")


def test_a_bad_backend_option_is_a_usage_error(tmp_path: Path, eval_dataset_dir: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["evaluate", "--model", "m", "--data", str(eval_dataset_dir), "--out", str(tmp_path),
         "--backend", "fast"],
    )  # fmt: skip
    words = " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())  # rich's error box
    assert result.exit_code == 2 and "--backend" in words
    assert "give transformers, vllm, a server URL or a YAML mapping" in words


@pytest.fixture(scope="module")
def sharp_model_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sharpen(tiny_model_dir, tmp_path_factory.mktemp("sharp-model"))


def _responses(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "responses.jsonl").read_text().splitlines()]


def test_generate_and_loop_decoders_write_the_same_greedy_responses(
    tmp_path: Path, sharp_model_dir: Path, eval_dataset_dir: Path
) -> None:
    """At temperature 0 the fast path is the same decoding as today's loop: the same file and
    report, on a model whose greedy text differs from prompt to prompt."""
    greedy = SMALL | {"temperature": 0.0}
    reports = {}
    for decoder, batch in (("loop", 8), ("generate", 512)):
        backend = {"type": "transformers", "device": "cpu", "decoder": decoder, "batch_size": batch}
        reports[decoder] = evaluate(
            sharp_model_dir, eval_dataset_dir, tmp_path / decoder, greedy | {"backend": backend}
        )
    fast, loop = _responses(tmp_path / "generate"), _responses(tmp_path / "loop")
    assert fast == loop and len(fast) == RESPONSES
    listwise = {r["response"] for r in fast if r["pair"] is None}
    # heldout, strong and hard show the fixture's same 2 lists, adv 2 edited ones: 4 prompts,
    # 4 different greedy texts (each prompt's K=2 samples alike)
    assert len(listwise) == 4
    on_disk = {d: json.loads((tmp_path / d / "report.json").read_text()) for d in reports}
    assert on_disk["generate"]["splits"] == on_disk["loop"]["splits"]  # (NaN is null there)
    assert on_disk["generate"]["config"]["backend"]["decoder"] == "generate"


@pytest.fixture(scope="module")
def tiny_llama_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama with the tiny Qwen2's tokenizer. `transformers serve` parses a
    Qwen-family model's chat output with a response template whose content ends at
    `<|im_end|>`, so an unfinished random completion comes back empty; a Llama's text comes
    back as generated. The server takes `do_sample` from the model's generation config, not
    from the request's temperature, so the model asks for sampling."""
    import torch
    from transformers import AutoConfig, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    out = tmp_path_factory.mktemp("tiny-llama")
    AutoTokenizer.from_pretrained(tiny_model_dir).save_pretrained(out)
    q = AutoConfig.from_pretrained(tiny_model_dir)
    torch.manual_seed(0)
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=q.vocab_size,
            hidden_size=q.hidden_size,
            intermediate_size=q.intermediate_size,
            num_hidden_layers=q.num_hidden_layers,
            num_attention_heads=q.num_attention_heads,
            num_key_value_heads=q.num_key_value_heads,
            max_position_embeddings=q.max_position_embeddings,
            tie_word_embeddings=True,
            eos_token_id=q.eos_token_id,
            pad_token_id=q.pad_token_id,
            bos_token_id=q.bos_token_id,
        )
    )
    model.generation_config.eos_token_id = q.eos_token_id
    model.generation_config.pad_token_id = q.pad_token_id
    model.generation_config.do_sample = True  # the server samples only where the model says so
    model.save_pretrained(out)
    return out


@pytest.mark.slow
def test_evaluate_through_a_real_openai_compatible_server(
    tmp_path: Path, tiny_llama_dir: Path, eval_dataset_dir: Path
) -> None:
    """`transformers serve` on 127.0.0.1 (it ignores n: the backend fans the K samples out),
    driven by `aletheia evaluate --backend URL`; its file re-scores the same without a model.
    A Think prompt's `<think>` prefill needs `continue_final_message` (vLLM, SGLang), which
    this server refuses: the error says so."""
    server = start_transformers_serve(tiny_llama_dir)
    try:
        args = ["evaluate", "--model", str(tiny_llama_dir), "--data", str(eval_dataset_dir),
                "--k", "2", "--limit", "2", "--max-new-tokens", "8", "--backend"]  # fmt: skip
        instruct = tmp_path / "instruct.yaml"
        instruct.write_text("style: instruct\ntemperature: 1.0\nprogress: false\n")
        runner = CliRunner()
        served = runner.invoke(
            app,
            [*args, server.base_url, "--stage-config", str(instruct), "--out", str(tmp_path / "a")],
        )
        assert served.exit_code == 0, served.output
        think = runner.invoke(app, [*args, server.base_url, "--out", str(tmp_path / "b")])
        log = server.log_path.read_text(errors="replace")
    finally:
        server.stop()
    rows = _responses(tmp_path / "a")
    assert len(rows) == RESPONSES
    assert all(r["response"] for r in rows)  # the server's texts, none failed
    assert len({r["response"] for r in rows}) > RESPONSES // 2  # sampled, not one text
    # every response was a request (n ignored: one completion per call)
    assert log.count('"POST /v1/chat/completions HTTP/1.1" 200') == RESPONSES
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    assert report["config"]["backend"]["type"] == "openai"
    evaluate(None, eval_dataset_dir, tmp_path / "r", responses=tmp_path / "a" / "responses.jsonl")
    assert json.loads((tmp_path / "r" / "report.json").read_text())["splits"] == report["splits"]
    assert think.exit_code != 0
    assert "vLLM or SGLang" in str(think.exception) and "instruct" in str(think.exception)


@pytest.mark.slow
def test_evaluate_through_the_vllm_worker_process(
    tmp_path: Path, sharp_model_dir: Path, eval_dataset_dir: Path
) -> None:
    """The offline vLLM backend's worker process, run with its transformers engine (vLLM
    cannot be installed here): the same greedy responses as the in-process backend."""
    greedy = SMALL | {"temperature": 0.0, "splits": ["heldout"]}
    worker = {"type": "vllm", "engine": "transformers", "chunk_size": 4}
    evaluate(sharp_model_dir, eval_dataset_dir, tmp_path / "w", greedy | {"backend": worker})
    evaluate(sharp_model_dir, eval_dataset_dir, tmp_path / "t", greedy)
    assert _responses(tmp_path / "w") == _responses(tmp_path / "t")
    assert len(_responses(tmp_path / "w")) == RESPONSES // 4


class _Crashing(Backend):
    """A real backend whose run is cut after `after` finished prompts: the exception stands in
    for a crash or a killed job (the generation itself is real)."""

    def __init__(self, inner: Backend, after: int | None = None) -> None:
        self.inner, self.after, self.name = inner, after, inner.name
        self.asked: list[str] = []

    def generate(self, requests, *, progress=True):
        self.asked += [q.request_id for q in requests]
        for n, result in enumerate(self.inner.generate(requests, progress=progress)):
            if self.after is not None and n == self.after:
                raise RuntimeError("killed (test double)")
            yield result


def test_an_interrupted_run_resumes_with_the_prompts_it_finished(
    tmp_path: Path, tiny_model_dir: Path, eval_dataset_dir: Path
) -> None:
    from pipeline.evaluate.checkpoint import FILE_NAME
    from pipeline.evaluate.runner import open_backend

    cfg = EvalConfig.model_validate(SMALL | {"limit": 1, "splits": ["heldout", "adv"]})
    out = tmp_path / "eval"
    inner = open_backend(tiny_model_dir, cfg)
    try:
        with pytest.raises(RuntimeError, match="killed"):
            evaluate(tiny_model_dir, eval_dataset_dir, out, cfg, backend=_Crashing(inner, 3))
        kept = [json.loads(x) for x in (out / FILE_NAME).read_text().splitlines()]
        assert len(kept) == 3  # 2 prompts a split x (1 list + 3 pairs) = 8; 3 were finished
        again = _Crashing(inner)
        evaluate(tiny_model_dir, eval_dataset_dir, out, cfg, backend=again)
        assert len(again.asked) == 8 - 3
        assert not {k["request_id"] for k in kept} & set(again.asked)
        assert not (out / FILE_NAME).exists()  # the responses file has them now
        rows = _responses(out)
        assert len(rows) == 2 * (2 + 3)
        reused = {k["request_id"]: k["texts"] for k in kept}
        for rid, texts in reused.items():  # the finished prompts' texts, as generated then
            split, _, tag = rid.split(":")
            mine = [r["response"] for r in rows if r["split"] == split
                    and (r["pair"] is None if tag == "list" else r["pair"] == [int(x) for x in tag.split(",")])]  # fmt: skip
            assert mine == texts
        # other settings: nothing is reused
        with pytest.raises(RuntimeError, match="killed"):
            evaluate(tiny_model_dir, eval_dataset_dir, out, cfg, backend=_Crashing(inner, 2))
        other = _Crashing(inner)
        evaluate(tiny_model_dir, eval_dataset_dir, out, cfg.model_copy(update={"max_new_tokens": 6}), backend=other)  # fmt: skip
        assert len(other.asked) == 8
    finally:
        inner.close()
