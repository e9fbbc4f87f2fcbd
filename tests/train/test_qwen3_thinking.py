"""Qwen3's thinking switch is set explicitly: the RLVR trainer and the policy evaluation both
hand `enable_thinking` to the chat template (off by default, this project's choice), and the
RLVR study configs say so.

The model is the tiny local Qwen2 with a chat template that behaves like Qwen3's on this
point (written here, not Qwen3's text): after the generation prompt it writes an empty
`<think>` block when `enable_thinking` is false, and nothing otherwise (Qwen3 then thinks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.train.rowgen import write_dataset

REPO = Path(__file__).resolve().parents[2]
EMPTY_THINK = "<|im_start|>assistant\n<think>\n\n</think>\n\n"
QWEN3_LIKE_TEMPLATE = (
    "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
    "{% if enable_thinking is defined and enable_thinking is false %}"
    "{{ '<think>\n\n</think>\n\n' }}{% endif %}{% endif %}"
)


@pytest.fixture(scope="module")
def qwen3_like_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from transformers import AutoTokenizer

    from pipeline.models.tiny import build_tiny_model

    path = build_tiny_model(tmp_path_factory.mktemp("qwen3-like"))
    tok = AutoTokenizer.from_pretrained(path)
    tok.chat_template = QWEN3_LIKE_TEMPLATE
    tok.save_pretrained(path)
    return path


def _rlvr_trainer(model: Path, data: Path, out: Path, enable_thinking: bool | None) -> Any:
    from pipeline.train.config import TrainConfig
    from pipeline.train.rlvr import build_rlvr

    cfg = TrainConfig.model_validate(
        {"method": "rlvr", "model": str(model), "output_dir": out,
         "data": {"dir": data, "config": "train_questions", "limit": 2},
         "optim": {"max_steps": 1, "per_device_train_batch_size": 2, "bf16": False, "use_cpu": True},
         "rlvr": {"num_generations": 2, "max_completion_length": 8, "enable_thinking": enable_thinking}}
    )  # fmt: skip
    # No step runs, so no reward is asked for: the sandbox client is never called.
    return build_rlvr(cfg, [], sandbox_client=object())


@pytest.mark.parametrize(("enable_thinking", "empty_block"), [(False, True), (True, False)])
def test_rlvr_prompts_reach_the_template_with_enable_thinking(
    tmp_path: Path, qwen3_like_model: Path, enable_thinking: bool, empty_block: bool
) -> None:
    data = write_dataset(tmp_path / "data")
    trainer = _rlvr_trainer(qwen3_like_model, data, tmp_path / "run", enable_thinking)
    assert trainer.args.chat_template_kwargs == {"enable_thinking": enable_thinking}
    # TRL's own prompt tokenisation for generation, on a real dataset row.
    prompt_ids, _, _ = trainer._tokenize_prompts([trainer.train_dataset[0]["prompt"]])
    text = trainer.processing_class.decode(prompt_ids[0])
    assert text.endswith(EMPTY_THINK) is empty_block, text[-80:]


def test_rlvr_default_is_thinking_off(tmp_path: Path, qwen3_like_model: Path) -> None:
    from pipeline.train.config import RlvrSettings

    assert RlvrSettings().enable_thinking is False
    data = write_dataset(tmp_path / "data")
    trainer = _rlvr_trainer(qwen3_like_model, data, tmp_path / "run", None)
    assert not trainer.args.chat_template_kwargs  # None: nothing passed, the template decides


@pytest.mark.parametrize(("enable_thinking", "empty_block"), [(False, True), (True, False)])
def test_policy_evaluation_sampling_passes_enable_thinking(
    tmp_path: Path, qwen3_like_model: Path, enable_thinking: bool, empty_block: bool
) -> None:
    """The whole path config -> ModelSource -> request -> backend -> chat template. The backend
    is the real transformers one, subclassed only to record the prompts it renders."""
    from pipeline.policy_eval.config import PolicyEvalConfig
    from pipeline.policy_eval.run import evaluate_policy
    from pipeline.problems.config import IngestConfig
    from pipeline.problems.stage import ingest
    from pipeline.sampling.backends.transformers_backend import TransformersBackend

    problems = tmp_path / "problems.parquet"
    mbpp = REPO / "data" / "mbpp_demo" / "mbpp_demo.jsonl"
    ingest([f"mbpp:{mbpp}"], problems, IngestConfig(), show_progress=False)
    rendered: list[str] = []

    class Recording(TransformersBackend):
        def render_prompt(self, request):  # type: ignore[no-untyped-def]
            rendered.append(text := super().render_prompt(request))
            return text

    def factory(source):  # type: ignore[no-untyped-def]
        assert source.chat_template_kwargs == {"enable_thinking": enable_thinking}
        return Recording(source.model, device="cpu", batch_size=2)

    cfg = PolicyEvalConfig(
        model=str(qwen3_like_model), split="train", limit=2, max_tokens=4,
        enable_thinking=enable_thinking, progress=False,
    )  # fmt: skip
    evaluate_policy(cfg, problems, tmp_path / "eval", backend_factory=factory, sample_only=True)
    assert len(rendered) == 2
    assert all(t.endswith(EMPTY_THINK) is empty_block for t in rendered), rendered[0][-80:]


def test_policy_evaluation_default_is_thinking_off() -> None:
    from pipeline.policy_eval.config import PolicyEvalConfig
    from pipeline.policy_eval.run import model_source

    cfg = PolicyEvalConfig(model="m")
    assert cfg.enable_thinking is False
    assert model_source(cfg).chat_template_kwargs == {"enable_thinking": False}
    assert (
        model_source(cfg.model_copy(update={"enable_thinking": None})).chat_template_kwargs is None
    )


@pytest.mark.parametrize("name", ["demo.yaml", "qwen3-0.6b.yaml", "llama-3.2-1b.yaml"])
def test_rlvr_study_configs_set_thinking_explicitly(name: str, tmp_path: Path) -> None:
    from pipeline.policy_eval.config import StudyConfig
    from pipeline.policy_eval.study import eval_config, train_config

    raw = yaml.safe_load((REPO / "configs" / "rlvr" / name).read_text())
    assert raw["enable_thinking"] is False  # written out, not left to a default
    cfg = StudyConfig.from_yaml(REPO / "configs" / "rlvr" / name)
    assert eval_config(cfg, "m", "base").enable_thinking is False
    run = train_config(cfg, next(iter(cfg.rewards)), cfg.algorithms[0], "m", tmp_path)
    assert run.rlvr.enable_thinking is False
    on = cfg.model_copy(update={"enable_thinking": True})
    assert eval_config(on, "m", "base").enable_thinking is True
    assert train_config(on, "combined", "grpo", "m", tmp_path).rlvr.enable_thinking is True


def test_rlvr_train_configs_set_thinking_explicitly() -> None:
    for name in ("rlvr_grpo.yaml", "rlvr_gspo.yaml"):
        raw = yaml.safe_load((REPO / "configs" / "train" / name).read_text())
        assert raw["rlvr"]["enable_thinking"] is False, name


def test_openai_compatible_servers_get_the_template_kwargs_as_a_request_field() -> None:
    """vLLM and SGLang read `chat_template_kwargs` from the request body (no server needed to
    check the body this backend builds)."""
    from pipeline.sampling.backends.base import GenerationRequest
    from pipeline.sampling.backends.openai_backend import OpenAIBackend

    backend = OpenAIBackend("http://127.0.0.1:9", "m")
    req = GenerationRequest(
        request_id="r", messages=[{"role": "user", "content": "hi"}],
        chat_template_kwargs={"enable_thinking": False},
    )  # fmt: skip
    path, body = backend._payload(req, 1, None)
    assert path == "/chat/completions" and body["chat_template_kwargs"] == {
        "enable_thinking": False
    }
    _, body = backend._payload(req.model_copy(update={"chat_template_kwargs": None}), 1, None)
    assert "chat_template_kwargs" not in body
