"""The verifier as an RLVR reward (Aletheia's codegen GRPO, BRPO): the reward and advantage
rules on hand-written verdicts, the reward-hacking diagnostic, the config rules, and real TRL
GRPO steps of the tiny fitted policy rewarded by a tiny random verifier (transformers), its
programs judged in the Docker sandbox beside it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pipeline.train import train
from pipeline.train.config import RlvrSettings
from pipeline.train.metrics_log import read_metrics
from pipeline.train.verifier_reward import (
    FAILED,
    Pair,
    brpo_advantages,
    brpo_rewards,
    draw_references,
    pairs_of,
    verifier_metrics,
)
from tests.evaluate.test_eval_backends import tiny_llama_dir  # noqa: F401 - a fixture
from tests.train.test_train_rlvr import rlvr_config


def test_each_rollout_meets_its_groups_reference_in_both_orders() -> None:
    refs = draw_references(8, 4, random.Random(0))
    assert len(refs) == 2 and 0 <= refs[0] < 4 <= refs[1] < 8
    pairs = pairs_of([1, 6], 4)
    # 3 rollouts per group, 2 orders each, never the reference against itself
    assert [(p.index, p.reference, p.order) for p in pairs[:2]] == [(0, 1, "AB"), (0, 1, "BA")]
    assert len(pairs) == 12 and all(p.index != p.reference for p in pairs)
    assert {p.index for p in pairs} == {0, 2, 3, 4, 5, 7}
    assert all(p.reference == (1 if p.index < 4 else 6) for p in pairs)
    with pytest.raises(ValueError, match="not whole groups of 4"):
        draw_references(6, 4, random.Random(0))


def test_a_rollout_earns_plus_one_only_when_it_wins_every_verdict() -> None:
    # One group of 4, reference 0; rollout 1 wins both orders twice (votes 2), rollout 2 wins
    # AB but loses one BA vote, rollout 3's verdicts are unreadable (None: not a win).
    pairs = pairs_of([0], 4)
    verdicts = {
        (1, "AB"): ["A", "A"], (1, "BA"): ["B", "B"],
        (2, "AB"): ["A", "A"], (2, "BA"): ["B", "A"],
        (3, "AB"): [None, "A"], (3, "BA"): ["B", "B"],
    }  # fmt: skip
    votes = [verdicts[p.index, p.order] for p in pairs]
    rewards = brpo_rewards(4, [0], pairs, votes)
    assert rewards == [0.0, 1.0, -1.0, -1.0]
    # |sum| / 4 = 0.25 <= 0.6: kept, advantages are the rewards as they are (no normalising)
    assert brpo_advantages(rewards, 4, 0.6) == ([0.0, 1.0, -1.0, -1.0], [True])
    # a group that leans one way (3 losers: |-3| / 4 = 0.75 > 0.6) teaches nothing
    skewed = [0.0, -1.0, -1.0, -1.0, 1.0, 0.0, -1.0, 1.0]
    assert brpo_advantages(skewed, 4, 0.6) == ([0.0] * 4 + [1.0, 0.0, -1.0, 1.0], [False, True])
    # a verdict that never came (the request failed): that rollout has no reward, advantage 0
    votes[2] = [FAILED, "A"]  # rollout 2's AB prompt
    assert brpo_rewards(4, [0], pairs, votes) == [0.0, 1.0, None, -1.0]
    assert brpo_advantages([0.0, 1.0, None, -1.0], 4, 0.6) == ([0.0, 1.0, 0.0, -1.0], [True])


def test_the_diagnostic_counts_rewards_against_the_tests_verdicts() -> None:
    # Two groups of 3, references 0 and 3. Tests: 1 fails but is rewarded (hacking), 2 passes
    # and is penalised, 4 passes and is rewarded, 5 was not judged (SE).
    rewards = [0.0, 1.0, -1.0, 0.0, 1.0, -1.0]
    passed = [True, False, True, False, True, None]
    pairs = [Pair(1, 0, "AB"), Pair(1, 0, "BA"), Pair(2, 0, "AB"), Pair(4, 3, "AB")]
    # pair (1 vs 0): 0 passes, so picking 1 is wrong; (2 vs 0): both pass, not counted;
    # (4 vs 3): 4 passes, picking it is right
    verdicts = [["A"], ["B"], ["B"], ["A", None]]
    m = verifier_metrics(rewards, [0, 3], passed, pairs, verdicts)
    assert m["rlvr/verifier/reward_given_fail"] == 1.0  # the one failing program: rewarded
    assert m["rlvr/verifier/penalty_given_pass"] == 0.5  # of 2 and 4, 2 was penalised
    assert m["rlvr/verifier/agreement"] == pytest.approx(1 / 3)  # 4 agrees; 1 and 2 do not
    assert m["rlvr/verifier/win_rate"] == 0.5  # 1 and 4 of 1, 2, 4, 5 (5 unjudged counts)
    assert m["rlvr/verifier/invalid"] == pytest.approx(1 / 5)
    # counted: 1 vs 0 twice (both wrong), 4 vs 3 twice (A right, None wrong): 1 of 4
    assert m["rlvr/verifier/pair_accuracy"] == 0.25


def test_the_verifier_reward_needs_its_section_and_brpo_needs_it_alone() -> None:
    verifier = {"model": "some/verifier"}
    with pytest.raises(ValueError, match="without an rlvr.verifier section"):
        RlvrSettings.model_validate({"rewards": {"verifier": 1.0}})
    with pytest.raises(ValueError, match="weight 0"):
        RlvrSettings.model_validate({"rewards": {"pass_fraction": 1.0}, "verifier": verifier})
    with pytest.raises(ValueError, match="only reward with a weight"):
        RlvrSettings.model_validate(
            {
                "rewards": {"verifier": 1.0, "pass_fraction": 1.0},
                "verifier": verifier | {"advantage": "brpo"},
            }
        )
    alone = RlvrSettings.model_validate(
        {"rewards": {"verifier": 1.0, "pass_fraction": 0.0}, "verifier": verifier}
    )
    mixed = RlvrSettings.model_validate(
        {"rewards": {"verifier": 1.0, "pass_fraction": 1.0}, "verifier": verifier}
    )
    monitor = RlvrSettings.model_validate(
        {"rewards": {"verifier": 0.0, "pass_fraction": 1.0}, "verifier": verifier}
    )
    assert (alone.brpo, mixed.brpo, monitor.brpo) == (True, False, False)
    # no verifier: the settings dump (every run's cache key) is what it was before
    assert "verifier" not in RlvrSettings().model_dump()


def test_a_verifier_that_cannot_be_reached_gives_no_reward_not_minus_one() -> None:
    """A served verifier that answered when training started and is gone at a step (a real
    refused connection): the batch gets no reward (None; BRPO advantages 0) and the failure is
    counted, where Aletheia reads it as "no preference" and gives every rollout -1. One that
    does not answer when training starts stops it there, in one line."""
    from pipeline.model_refs import ModelUnavailable
    from pipeline.train.config import VerifierRewardSettings
    from pipeline.train.verifier_reward import VerifierReward
    from tests.test_preflight_models import ModelList, closed_url

    def settings(url: str) -> VerifierRewardSettings:
        return VerifierRewardSettings.model_validate(
            {"model": "verifier",
             "backend": {"type": "openai", "base_url": url, "max_retries": 0, "timeout_s": 5}}
        )  # fmt: skip

    with pytest.raises(ModelUnavailable, match="no model server answers"):
        VerifierReward(settings(closed_url()), group_size=2, language="python", brpo=True).open()
    server = ModelList(["verifier"])  # lists the model at the start, then goes away
    reward = VerifierReward(settings(server.url), group_size=2, language="python", brpo=True)
    reward.open()
    server.close()
    scores = reward.score(["print(1)", "print(2)"], ["Print."] * 2, [True, False])
    reward.close()
    assert scores.rewards == [None, None] and scores.advantages == [0.0, 0.0]
    assert scores.metrics["rlvr/verifier/failed_batches"] == 1.0
    assert "rlvr/verifier/invalid" not in scores.metrics  # no verdict to read


@pytest.fixture(scope="module")
def tiny_verifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised tiny Qwen2 (pipeline.models.tiny): the demo's verifier."""
    from pipeline.models.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-verifier"))


def _verifier_run(
    tmp: Path, policy: Path, data: Path, verifier: Path, rewards: dict, steps: int = 2
) -> dict:
    return rlvr_config(
        policy,
        data,
        tmp,
        optim={"max_steps": steps, "per_device_train_batch_size": 8, "seed": 1},
        rlvr={
            "num_generations": 4,
            "max_completion_length": 24,
            "temperature": 1.5,
            "rewards": rewards,
            "verifier": {
                "model": str(verifier),
                "backend": {"type": "transformers", "device": "cpu", "threads": 1},
                "max_tokens": 8,
                "constrain_answer": True,  # a random model's verdict is then A or B
                "temperature": 1.0,
            },
        },
    )


@pytest.mark.docker
def test_grpo_with_the_verifier_alone_trains_on_brpo_advantages(
    tmp_path: Path,
    code_policy_dir: Path,
    dataset_dir: Path,
    tiny_verifier: Path,
    sandbox_client: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The verifier is the only weighted reward: the loss sees BRPO's advantages (the rewards
    as they are, a group's reference 0, skewed groups dropped), not TRL's normalised ones, and
    every step logs the diagnostic against the sandbox's verdicts."""
    from pipeline.train.rlvr import timed_grpo_trainer

    seen: list[list[float]] = []
    trainer_cls = timed_grpo_trainer()
    original = trainer_cls._compute_loss

    def recording(self, model, inputs):  # the advantages the loss is computed with
        seen.append(inputs["advantages"].flatten().tolist())
        return original(self, model, inputs)

    monkeypatch.setattr(trainer_cls, "_compute_loss", recording)
    cfg = _verifier_run(
        tmp_path / "run",
        code_policy_dir,
        dataset_dir,
        tiny_verifier,
        {"verifier": 1.0, "pass_fraction": 0.0},
    )
    summary = train(cfg, sandbox_client=sandbox_client)
    steps = [r for r in read_metrics(summary["metrics_log"]) if "loss" in r]
    assert len(steps) == 2 and len(seen) == 2
    for s, advantages in zip(steps, seen, strict=True):
        # TRL shuffles the batch before the loss: count, do not locate. A kept group has its
        # reference at 0 and three +-1; a dropped one four 0s.
        assert len(advantages) == 8 and set(advantages) <= {-1.0, 0.0, 1.0}, advantages
        dropped = (advantages.count(0.0) - 2) / 3  # groups dropped, of 2
        assert dropped in (0, 1, 2), advantages
        assert s["rlvr/verifier/groups_dropped"] == pytest.approx(dropped / 2)
        assert s["rlvr/zero_variance_groups"] == pytest.approx(dropped / 2)
        if dropped == 0:  # not normalised: the rewards themselves (TRL's would be centred)
            assert sum(advantages) == pytest.approx(8 * s["rewards/verifier/mean"])
        # TRL's reward: one reference (0) and three +-1 per group
        assert -0.75 <= s["rewards/verifier/mean"] <= 0.75
        assert s["rlvr/verifier/invalid"] == 0.0  # constrained: every verdict is A or B
        assert 0.0 <= s["rlvr/verifier/win_rate"] <= 1.0
        assert s["rlvr/verifier/time_s"] > 0 and s["rlvr/verifier/failed_batches"] == 0.0
        assert "rlvr/pass_at_1" in s  # the sandbox judged the same rollouts
        diagnostic = [k for k in s if k.startswith("rlvr/verifier/") and k.endswith("_pass")]
        diagnostic += [k for k in s if k.endswith("_fail")]
        assert diagnostic, s  # some judged program passed or failed: the diagnostic is there


@pytest.mark.docker
def test_the_verifier_beside_the_unit_tests_is_one_more_weighted_reward(
    tmp_path: Path,
    code_policy_dir: Path,
    dataset_dir: Path,
    tiny_verifier: Path,
    sandbox_client: object,
) -> None:
    cfg = _verifier_run(
        tmp_path / "run",
        code_policy_dir,
        dataset_dir,
        tiny_verifier,
        {"pass_fraction": 1.0, "verifier": 0.5},
        steps=1,
    )
    assert not cfg.rlvr.brpo
    summary = train(cfg, sandbox_client=sandbox_client)
    [s] = [r for r in read_metrics(summary["metrics_log"]) if "loss" in r]
    # TRL sums the two, weighted: its reward is pass fraction + 0.5 x verifier
    assert s["reward"] == pytest.approx(
        s["rewards/pass_fraction/mean"] + 0.5 * s["rewards/verifier/mean"], abs=1e-5
    )
    # one process: our flat-group share (over the weighted sum) is TRL's own
    assert s["rlvr/zero_variance_groups"] == pytest.approx(s["frac_reward_zero_std"])
    assert "rlvr/verifier/groups_dropped" not in s  # no BRPO here
    assert "rlvr/verifier/agreement" in s


@pytest.mark.slow
def test_a_served_verifier_rewards_through_an_openai_compatible_server(
    tiny_llama_dir: Path,  # noqa: F811 - the fixture imported above
) -> None:
    """The verifier behind `transformers serve` (a real OpenAI-compatible process, as Aletheia
    served its verifier with vLLM): every pair prompt in both orders reaches the server, and its
    answers (a random model's: mostly unreadable) become rewards. The Instruct prompt: this
    server cannot continue the Think prefill (vLLM and SGLang can)."""
    from pipeline.train.config import VerifierRewardSettings
    from pipeline.train.verifier_reward import VerifierReward
    from tests.sampling.serving import start_transformers_serve

    server = start_transformers_serve(tiny_llama_dir)
    reward = None
    try:
        settings = VerifierRewardSettings.model_validate(
            {
                "model": str(tiny_llama_dir),
                "backend": {"type": "openai", "base_url": server.base_url},
                "prompt": {"style": "instruct"},
                "max_tokens": 8,
                "temperature": 1.0,
            }
        )
        reward = VerifierReward(settings, group_size=4, language="python", brpo=True)
        programs = ["print(1)", "print(2)", "x = 1", "print(3)"] * 2
        scores = reward.score(programs, ["Print a number."] * 8, [True, False] * 4)
        log = server.log_path.read_text(errors="replace")
    finally:
        if reward is not None:
            reward.close()
        server.stop()
    # 2 groups x 3 rollouts x 2 orders, one verdict each: 12 requests, all answered
    assert log.count('"POST /v1/chat/completions HTTP/1.1" 200') == 12
    assert scores.metrics["rlvr/verifier/failed_batches"] == 0.0
    assert sorted(scores.rewards).count(0.0) == 2  # one reference per group
    assert set(scores.rewards) <= {-1.0, 0.0, 1.0}
    assert 0.0 <= scores.metrics["rlvr/verifier/invalid"] <= 1.0
    assert scores.advantages is not None and len(scores.advantages) == 8
