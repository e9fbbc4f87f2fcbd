"""Best-of-N end to end on the real sandbox (Docker): the demo's fitted MBPP policy samples the
MBPP-shaped demo tasks (`evaluate-policy`), the tiny random verifier picks in list and in
pairwise mode (`aletheia best-of-n`), and the report's invariants hold. The output probes of
the majority baseline are checked on their own, on a bundled stdio problem and on the policy's
function-mode samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tests.policy_eval.mbpp_policy import REPO, demo_problems, fit_demo_policy

pytestmark = pytest.mark.docker

N = 4


@pytest.fixture(scope="module")
def policy_samples(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    """(problems, the policy evaluation folder, its report): 4 samples per train task at a
    temperature where the fitted policy writes right and wrong programs alike."""
    from pipeline.policy_eval.config import PolicyEvalConfig
    from pipeline.policy_eval.stage import run_policy_eval

    model, problems = fit_demo_policy(), demo_problems()
    cfg = PolicyEvalConfig(
        model=str(model),
        split="train",
        samples=N,
        k=[1, N],
        temperature=1.5,
        max_tokens=64,
        progress=False,
        bootstrap={"resamples": 200},
    )
    out = tmp_path_factory.mktemp("policy") / "eval"
    return problems, out, run_policy_eval(cfg, problems, out).stats


def _config(tmp_path: Path) -> Path:
    cfg = tmp_path / "bon.yaml"
    cfg.write_text(
        "backend: {type: transformers, device: cpu, batch_size: 16, threads: 1}\n"
        "progress: false\nbootstrap: {resamples: 200}\nmax_new_tokens: 8\n"
    )
    return cfg


def _best_of_n(args: list[str]) -> Any:
    from aletheia.cli import app

    return CliRunner().invoke(app, ["best-of-n", *args])


def _invariants(out: Path, problems: int, n: int) -> dict[str, Any]:
    """What every Best-of-N report must satisfy, whatever the verifier."""
    report = json.loads((out / "report.json").read_text())
    s = report["summary"]["all"]
    methods = {k: m["value"] for k, m in s["methods"].items()}
    c = s["verifier_counts"]
    assert report["problems"] == s["problems"] == problems and report["n"] == n
    assert c["picked_correct"] + c["picked_wrong"] + c["unparseable"] == problems
    assert methods["verifier"] == pytest.approx(c["picked_correct"] / problems)
    for key, value in methods.items():  # nothing picks better than "some sample is right"
        assert value <= methods["oracle"] + 1e-12, key
    rows = pq.read_table(out / "per_problem.parquet").to_pylist()
    assert len(rows) == problems and all(len(r["verdicts"]) == n for r in rows)
    right = [sum(v == "AC" for v in r["verdicts"]) for r in rows]
    assert methods["random"] == pytest.approx(sum(x / n for x in right) / problems)
    assert methods["oracle"] == pytest.approx(sum(x > 0 for x in right) / problems)
    assert sum(r["unparseable"] for r in rows) == c["unparseable"]
    curve = report["summary"]["curve"]
    assert [p["n"] for p in curve] == list(range(1, n + 1))
    oracle = [p["oracle"] for p in curve]
    assert oracle == sorted(oracle)  # more samples: never less often one right
    for p in curve:  # the first n samples: nothing picks better than some sample is right
        for key in ("verifier", "random", "majority", "shortest"):
            assert p[key] is None or p[key] <= p["oracle"] + 1e-12, (p, key)
    for key in ("random", "oracle", "majority", "shortest"):  # at N the curve is the table
        assert curve[-1][key] == pytest.approx(methods[key]), key
    first = curve[0]  # n = 1: every selector takes the one sample
    assert first["oracle"] == first["random"] == first["majority"] == first["shortest"]
    assert first["verifier"] == first["random"]
    logged = (out / "verifier_responses.jsonl").read_text().splitlines()
    assert len(logged) >= c["responses"]  # every response at N, and the curve's
    assert (out / "bon_curve.png").stat().st_size > 0
    md = (out / "report.md").read_text()
    assert "| oracle (pass@N) |" in md and "## python" in md and "## Accuracy against N" in md
    return report


@pytest.mark.timeout(900)
def test_best_of_n_in_both_modes_with_the_tiny_verifier(
    policy_samples: tuple[Path, Path, dict], tiny_model_dir: Path, tmp_path: Path
) -> None:
    problems, samples, policy_report = policy_samples
    cfg = _config(tmp_path)
    common = ["-p", str(problems), "--samples", str(samples), "--verifier", str(tiny_model_dir)]
    common += ["-c", str(cfg)]

    # list: all N in one prompt, K = 2 constrained answers (every answer parses).
    listed = tmp_path / "list"
    args = [*common, "--mode", "list", "--k", "2", "--constrain-answer", "-o", str(listed)]
    res = _best_of_n(args)
    assert res.exit_code == 0, res.output
    report = _invariants(listed, policy_report["problems"], N)
    c = report["summary"]["all"]["verifier_counts"]
    assert c["unparseable"] == 0 and c["responses"] == 2 * report["problems"]
    # random pick = the policy evaluation's own pass@1 on the same samples
    random = report["summary"]["all"]["methods"]["random"]["value"]
    assert random == pytest.approx(policy_report["pass"]["pass@1"]["value"])
    assert report["summary"]["all"]["methods"]["oracle"]["value"] == pytest.approx(
        policy_report["pass"][f"pass@{N}"]["value"]
    )
    assert all(p["verifier"] is not None for p in report["summary"]["curve"])
    # the same samples, verifier and settings: the stage's marker matches, nothing runs
    again = _best_of_n(args)
    assert again.exit_code == 0 and "reused (nothing ran)" in again.output, again.output

    # pairwise: the first 3 samples, both orders of each pair, free answers: the random model
    # writes no verdict, so every pick fails, and each is counted as unparseable.
    pairs = tmp_path / "pairwise"
    res = _best_of_n(
        [*common, "--mode", "pairwise", "--n", "3", "--limit", "4", "--free-answer"]
        + ["-o", str(pairs)]
    )
    assert res.exit_code == 0, res.output
    report = _invariants(pairs, 4, 3)
    c = report["summary"]["all"]["verifier_counts"]
    assert c["responses"] == 4 * 6 and c["unparseable_responses"] == 4 * 6
    assert c["unparseable"] == 4 and report["summary"]["all"]["methods"]["verifier"]["value"] == 0
    assert "4 unparseable" in (pairs / "report.md").read_text()

    # The highest-mean-log-prob baseline: each completion scored under the policy first.
    scored = tmp_path / "logprob"
    res = _best_of_n(
        [*common, "--constrain-answer", "--no-curve", "--limit", "3", "-o", str(scored)]
        + ["--logprobs-from", str(fit_demo_policy())]
    )
    assert res.exit_code == 0, res.output
    values = [json.loads(x)["mean_logprob"] for x in (scored / "samples_logprob.jsonl").open()]
    assert len(values) == policy_report["problems"] * N
    assert all(v is None or v < 0 for v in values) and any(v is not None for v in values)
    report = json.loads((scored / "report.json").read_text())
    methods = report["summary"]["all"]["methods"]
    assert methods["logprob"]["value"] <= methods["oracle"]["value"]
    assert "| highest mean log-prob |" in (scored / "report.md").read_text()


def test_output_probes_group_samples_by_what_they_print(
    policy_samples: tuple[Path, Path, dict], sandbox_client: Any, tmp_path: Path
) -> None:
    from pipeline.bestofn.judging import judge_samples
    from pipeline.bestofn.probes import majority_pick
    from pipeline.bestofn.samples import load_samples
    from pipeline.judge.config import SandboxSection
    from pipeline.judge.stage import load_problems
    from pipeline.problems.stage import ingest

    # A bundled stdio problem, samples from a JSONL: the reference, a wrong program, the
    # reference with a comment added (the same outputs) and the C++ reference (not probed).
    bundled = tmp_path / "bundled.parquet"
    ingest(["bundled"], bundled, show_progress=False)
    problems = load_problems(bundled)
    (climb,) = [p for p in problems.values() if "longest-climb" in p.source_id]
    sol = REPO / "data" / "bundled" / "longest-climb" / "solutions"
    codes = [
        ("python", (sol / "correct.py").read_text()),
        ("python", (sol / "wrong_non_strict.py").read_text()),
        ("python", "# the same program\n" + (sol / "correct.py").read_text()),
        ("cpp", (sol / "correct.cpp").read_text()),
    ]
    jsonl = tmp_path / "samples.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps({"source_id": climb.source_id, "language": lang, "code": code}) + "\n"
            for lang, code in codes
        )
    )
    (ps,) = load_samples(jsonl, problems)
    got = judge_samples([ps], SandboxSection(), client=sandbox_client, progress=False)
    assert got.verdicts[0][0] == got.verdicts[0][2] == got.verdicts[0][3] == "AC"
    assert got.verdicts[0][1] != "AC"
    sigs = got.signatures[0]  # type: ignore[index]
    assert sigs[0] == sigs[2] and all(sigs[0]) and sigs[1] != sigs[0] and sigs[3] is None
    assert majority_pick(sigs) == 0

    # The policy's function-mode samples: every correct sample returns the same values.
    problems_file, samples, _ = policy_samples
    chosen = load_samples(samples, load_problems(problems_file))
    got = judge_samples(chosen, SandboxSection(), client=sandbox_client, progress=False)
    for p, ps in enumerate(chosen):
        right = {got.signatures[p][i] for i, v in enumerate(got.verdicts[p]) if v == "AC"}  # type: ignore[index]
        assert len(right) <= 1 and None not in right, ps.problem.source_id
        for i, v in enumerate(got.verdicts[p]):
            if v in ("CE", "no_program"):  # nothing ran: no output
                assert got.signatures[p][i] is None or not any(got.signatures[p][i])  # type: ignore[index]
