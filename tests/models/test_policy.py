"""Tiny local policies: line tokenizer, content-keyed cache, determinism, run-config wiring."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.models.config import PolicyFit
from pipeline.models.policy import (
    FIT_FILE,
    examples_from_problems,
    fit_on_problems,
    line_tokenizer,
    read_fit,
    spec_digest,
)
from schemas.problem import Problem, Solution

GOOD = "a, b = map(int, input().split())\nprint(a + b)\n"
WRONG = "a, b = map(int, input().split())\nprint(a - b)\n"


def _problems() -> list[Problem]:
    return [
        Problem(
            problem_id="sum2", source="t", source_id="sum2", title="sum2",
            statement="Read two integers a and b and print a + b.", test_mode="stdio",
            tests=[{"input": "1 2\n", "output": "3\n"}],
            solutions=[Solution(language="python", code=GOOD, correct=True),
                       Solution(language="python", code=WRONG, correct=False)],
        )
    ]  # fmt: skip


def _spec(tmp_path: Path, name: str = "p", **kw: object) -> PolicyFit:
    base = {"languages": ["python"], "hidden_size": 16, "steps": 5, "batch_size": 2}
    return PolicyFit(name=name, dir=tmp_path / name, **(base | kw))


def test_each_line_is_one_token_and_decoding_gives_the_text_back() -> None:
    tok = line_tokenizer([GOOD, WRONG])
    ids = tok.encode(GOOD, add_special_tokens=False)
    assert tok.convert_ids_to_tokens(ids) == [
        "a, b = map(int, input().split())\n",
        "print(a + b)\n",
    ]
    assert tok.decode(ids) == GOOD
    assert tok.encode("print(a * b)\n", add_special_tokens=False) == [tok.unk_token_id]


def test_examples_keep_wrong_references_only_when_asked(tmp_path: Path) -> None:
    assert len(examples_from_problems(_problems(), _spec(tmp_path))) == 1
    both = examples_from_problems(_problems(), _spec(tmp_path, include_wrong=True))
    assert [e.completion for e in both] == [
        f"```python\n{GOOD.rstrip()}\n```",
        f"```python\n{WRONG.rstrip()}\n```",
    ]
    assert both[0].messages[-1]["content"].startswith("Solve the following problem in Python 3.")
    with pytest.raises(ValueError, match="policy p: no reference solutions in \\['cpp'\\]"):
        examples_from_problems(_problems(), _spec(tmp_path, languages=["cpp"]))


def test_fit_loads_with_auto_classes_is_cached_by_content_and_deterministic(tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    a = fit_on_problems(_problems(), _spec(tmp_path, "a"))
    tok = AutoTokenizer.from_pretrained(a)  # our tokenizer.json as written, not a rebuilt BPE
    assert tok.decode(tok.encode(GOOD, add_special_tokens=False)) == GOOD
    assert AutoModelForCausalLM.from_pretrained(a).config.vocab_size == len(tok)

    stamp = (a / FIT_FILE).stat().st_mtime_ns
    assert fit_on_problems(_problems(), _spec(tmp_path, "a")) == a
    assert (a / FIT_FILE).stat().st_mtime_ns == stamp  # same inputs: reused, not refitted

    b = fit_on_problems(_problems(), _spec(tmp_path, "b"))  # same settings, another folder
    assert read_fit(b)["weights_sha256"] == read_fit(a)["weights_sha256"]
    assert read_fit(b)["key"] == read_fit(a)["key"]

    fit_on_problems(_problems(), _spec(tmp_path, "a", steps=6))  # settings changed: refitted
    assert read_fit(a)["spec"]["steps"] == 6
    assert read_fit(a)["key"] != read_fit(b)["key"]


def test_run_config_stamps_the_fit_digest_on_sources_that_sample_a_policy(tmp_path: Path) -> None:
    from pipeline.config import RunConfig

    policy = {"name": "weak", "dir": str(tmp_path / "weak"), "steps": 7}
    source = {"kind": "model", "name": "weak", "model": str(tmp_path / "weak"), "tier": "weak"}
    cfg = RunConfig.model_validate({"policies": [policy], "sample": {"sources": [source]}})
    expected = f"fit-{spec_digest(PolicyFit.model_validate(policy))}"
    assert cfg.sample.sources[0].revision == expected
    other = RunConfig.model_validate(
        {"policies": [policy | {"steps": 8}], "sample": {"sources": [source]}}
    )
    assert other.sample.sources[0].revision != expected and other.build_id != cfg.build_id
    with pytest.raises(ValueError, match="revision is set by the fit"):
        RunConfig.model_validate(
            {"policies": [policy], "sample": {"sources": [source | {"revision": "main"}]}}
        )
