"""DPO pairs from real tiny-model responses (two judge models, balanced), and pairing rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.common.answers import parse_answer, well_formed
from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.verifier_prompt import PromptSpec, build_messages
from pipeline.instances.assemble import assemble_frames
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.dpo.config import DPOConfig, JudgeModelSpec
from pipeline.instances.dpo.pairs import PairBalancer
from pipeline.instances.dpo.responses import Response
from pipeline.instances.stage import build_dpo
from pipeline.instances.synthetic import synthetic_judged, synthetic_problems
from schemas import INSTANCE_SCHEMA
from schemas.dpo import DPO_SCHEMA


def _resp(judge: str, text: str, answer: str | None, i: int = 0, finish: str = "stop") -> Response:
    return Response("i_1", "think", judge, i, text, answer, finish)


def _prompt(r: dict, style: str) -> list[dict[str, str]]:
    """The verifier prompt's turns without the assistant pre-fill (TRL's conversational
    `prompt`)."""
    msgs = build_messages(r["query"], r["candidates"], r["candidate_languages"], PromptSpec(style))
    return [m for m in msgs if m["role"] != "assistant"]


def _text(turns: list[dict[str, str]]) -> str:
    """A `chosen` / `rejected` value is one assistant message: its text."""
    assert [m["role"] for m in turns] == ["assistant"]
    return turns[0]["content"]


def test_pairs_need_a_right_and_a_wrong_response_and_skip_backend_errors() -> None:
    b = PairBalancer(seed=0)
    assert b.pick("i_1", "think", "B", [_resp("m", "x \\boxed{A}", "A")], 1) == (
        [],
        "no_correct_response",
    )
    assert b.pick("i_1", "think", "B", [_resp("m", "\\boxed{B}", "B")], 1) == (
        [],
        "no_incorrect_response",
    )
    # a backend error is not a verifier response: never a rejected trace
    err = _resp("m", "", None, finish="error:prompt_too_long")
    assert b.pick("i_1", "think", "B", [_resp("m", "\\boxed{B}", "B"), err], 1) == (
        [],
        "no_incorrect_response",
    )
    pairs, why = b.pick(
        "i_1", "think", "B", [_resp("m", "\\boxed{B}", "B"), _resp("m", "hmm", None, 1)], 1
    )
    assert (
        why is None and pairs[0].rejected.answer is None
    )  # an invalid response is a fine rejected one


def test_pairs_balance_chosen_across_judges_and_prefer_same_judge_rejected() -> None:
    b = PairBalancer(seed=0)
    for k in range(10):
        responses = [
            _resp("a", f"a{k} \\boxed{{C}}", "C"),
            _resp("a", f"a{k} \\boxed{{A}}", "A", 1),
            _resp("b", f"b{k} \\boxed{{C}}", "C"),
            _resp("b", f"b{k} \\boxed{{B}}", "B", 1),
        ]
        (pair,), why = b.pick(f"i_{k}", "think", "C", responses, 1)
        assert why is None and pair.chosen.judge_model == pair.rejected.judge_model
    assert b.chosen_by_judge == {"a": 5, "b": 5}


@pytest.fixture(scope="module")
def instances(tmp_path_factory: pytest.TempPathFactory) -> Path:
    judged = synthetic_judged(1_500, n_problems=30, seed=2)
    problems, assignments = synthetic_problems(30, seed=2)
    cfg = AssembleConfig(splits=[SplitSpec(name="train", size_targets={2: 2, 3: 2, 4: 2})])
    table = assemble_frames(judged, problems, assignments, cfg)[0]["train"]
    assert table.num_rows == 6
    path = tmp_path_factory.mktemp("dpo") / "train.parquet"
    write_parquet(table, path, INSTANCE_SCHEMA)
    return path


def test_on_policy_dpo_pairs_from_two_real_tiny_models(
    instances: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    from pipeline.models.tiny import build_tiny_model
    from pipeline.sampling.backends.transformers_backend import TransformersBackend

    other = build_tiny_model(tmp_path / "tiny-b", seed=1)
    backends = {
        "tiny-a": TransformersBackend(tiny_model_dir, model_name="tiny-a", batch_size=16),
        "tiny-b": TransformersBackend(other, model_name="tiny-b", batch_size=16),
    }
    cfg = DPOConfig(
        judges=[JudgeModelSpec(name="tiny-a"), JudgeModelSpec(name="tiny-b")],
        samples_per_judge=6,
        max_tokens=16,
        variants=["instruct"],
        construction="on_policy",
        constrain_answer=True,
    )
    stats = build_dpo(instances, tmp_path / "out", cfg, backend=backends)
    table = read_parquet(tmp_path / "out" / "dpo.parquet", DPO_SCHEMA)
    rows = table.to_pylist()
    src = {r["instance_id"]: r for r in read_parquet(instances, INSTANCE_SCHEMA).to_pylist()}
    assert stats["responses_by_judge"]["tiny-a"]["responses"] == 6 * 6
    assert stats["responses_by_judge"]["tiny-b"]["responses"] == 6 * 6
    assert len(rows) == stats["pairs"] >= 3
    assert stats["pairs"] + sum(stats["instances_short_of_pairs"].values()) == 6
    for r in rows:
        k = r["num_candidates"]
        assert (
            parse_answer(_text(r["chosen"]), k)
            == r["chosen_answer"]
            == src[r["instance_id"]]["chosen_answer"]
        )
        picked = parse_answer(_text(r["rejected"]), k)
        assert picked != r["chosen_answer"] and r["rejected_answer"] == (picked or "invalid")
        assert r["prompt"] == _prompt(r, "instruct")  # the system turn, then the user turn
        assert [m["role"] for m in r["prompt"]] == ["system", "user"]
        assert r["judge_model"] in backends and r["prompt_variant"] == "instruct"
        assert r["chosen_source"] == "sampled"
    chosen = stats["chosen_by_judge"]
    if len(chosen) == 2:  # balanced where both judges had right answers to give
        assert abs(chosen["tiny-a"] - chosen["tiny-b"]) <= max(2, len(rows) // 2)
    # The responses are the models' own: the same request sampled again gives the same text.
    again = build_dpo(instances, tmp_path / "again", cfg, backend=backends)
    assert again == stats
    assert (tmp_path / "again" / "dpo.parquet").read_bytes() == (
        tmp_path / "out" / "dpo.parquet"
    ).read_bytes()


def test_strong_judge_fallback_is_used_only_where_nobody_was_right(
    instances: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    from pipeline.sampling.backends.transformers_backend import TransformersBackend

    weak = TransformersBackend(tiny_model_dir, model_name="weak")
    strong = TransformersBackend(tiny_model_dir, model_name="strong")
    cfg = DPOConfig(
        judges=[JudgeModelSpec(name="weak")],
        samples_per_judge=1,
        max_tokens=8,
        variants=["instruct"],
        construction="on_policy",
        constrain_answer=True,
        fallback="strong_judge",
        fallback_judge=JudgeModelSpec(name="strong"),
        fallback_samples=8,
    )
    stats = build_dpo(instances, tmp_path / "fb", cfg, backend={"weak": weak, "strong": strong})
    weak_right = stats["responses_by_judge"]["weak"]["correct"]
    assert stats["fallback_samples_for_instances"] == 6 - weak_right
    assert stats["responses_by_judge"].get("strong", {"responses": 0})["responses"] == 8 * (
        6 - weak_right
    )
    rows = read_parquet(tmp_path / "fb" / "dpo.parquet", DPO_SCHEMA).to_pylist()
    assert any(r["judge_model"] == "strong" for r in rows) or weak_right == 6


def test_aletheia_dpo_from_real_tiny_models_keeps_every_instance(
    instances: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    """The default construction on real, unconstrained tiny-model responses (random text,
    so nearly none is correct): every instance still yields a pair, chosen ends in the gold
    box after `</think>` (sampled, or the strong judge's trace with the gold spliced in),
    unparseable responses serve as rejected, and rejected quotas alternate between judges."""
    from pipeline.models.tiny import build_tiny_model
    from pipeline.sampling.backends.transformers_backend import TransformersBackend

    other = build_tiny_model(tmp_path / "tiny-b", seed=1)
    backends = {
        "tiny-a": TransformersBackend(tiny_model_dir, model_name="tiny-a", batch_size=16),
        "tiny-b": TransformersBackend(other, model_name="tiny-b", batch_size=16),
    }
    cfg = DPOConfig(
        judges=[JudgeModelSpec(name="tiny-a"), JudgeModelSpec(name="tiny-b")],
        strong_judge="tiny-b",
        rejected_judges=["tiny-a", "tiny-b"],
        samples_per_judge=3,
        max_tokens=12,
    )
    stats = build_dpo(instances, tmp_path / "out", cfg, backend=backends)
    rows = read_parquet(tmp_path / "out" / "dpo.parquet", DPO_SCHEMA).to_pylist()
    assert stats["construction"] == "aletheia" and len(rows) == stats["pairs"] == 6
    assert sum(stats["chosen_source"].values()) == 6
    for r in rows:
        k, gold = r["num_candidates"], r["chosen_answer"]
        chosen = _text(r["chosen"])
        assert chosen.startswith("<think>\n")  # the pre-fill is part of the turn
        assert _text(r["rejected"]).startswith("<think>\n")
        assert chosen.endswith("</think>\n\\boxed{" + gold + "}")
        assert chosen.count("</think>") == 1 and parse_answer(chosen, k) == gold
        assert well_formed(chosen, k, "think") or "<think>" in chosen[7:]
        assert parse_answer(_text(r["rejected"]), k) != gold
        assert r["prompt"] == _prompt(r, "think") and r["prompt_variant"] == "think"
        assert [m["role"] for m in r["prompt"]] == ["user"]  # the pre-fill is in the turns
        if r["chosen_source"] == "gold_spliced":
            assert r["judge_model"] == "tiny-b"
    # 6 instances, quota 3 each, ties broken in the configured order: a, b, a, b, a, b.
    assert stats["rejected_by_judge"] == {"tiny-a": 3, "tiny-b": 3}


def test_dpo_prompt_template_file_is_used(tmp_path: Path) -> None:
    """A user template with the published placeholders replaces our wording in the prompt."""
    from pipeline.instances.dpo.responses import verifier_messages

    tpl = tmp_path / "user.txt"
    tpl.write_text("Q: {question}\n{candidates}\nPick one of {valid_options}.\n")
    cfg = DPOConfig(prompt_template=str(tpl))
    row = {
        "query": "Add.",
        "candidates": ["print(1)", "print(2)"],
        "candidate_languages": ["python"] * 2,
    }
    msgs = verifier_messages(row, "think", cfg)
    assert msgs[0]["content"].startswith("Q: Add.\n[CANDIDATE_A]")
    assert msgs[0]["content"].endswith("Pick one of A, B.")
    assert msgs[-1] == {"role": "assistant", "content": "<think>\n"}
    with pytest.raises(ValueError, match="system_template"):
        DPOConfig(system_template=str(tpl))  # only the instruct variant has a system turn
