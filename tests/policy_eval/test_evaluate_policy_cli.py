"""`aletheia evaluate-policy` and `compare-policy-reports` on a tiny fitted policy, the real sandbox:
all four diagnostic families from real generations and real verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tests.policy_eval.mbpp_policy import demo_problems, fit_demo_policy


@pytest.mark.docker
@pytest.mark.timeout(900)
def test_evaluate_policy_and_compare(tmp_path: Path) -> None:
    from aletheia.cli import app

    model, problems = fit_demo_policy(), demo_problems()
    runner = CliRunner()
    outs = {}
    args: dict[str, list[str]] = {}
    for name, temperature in (("cool", 1.0), ("hot", 2.0)):
        cfg = tmp_path / f"{name}.yaml"
        cfg.write_text(
            f"temperature: {temperature}\nmax_tokens: 64\nprogress: false\nbootstrap: {{resamples: 500}}\n"
        )
        outs[name] = tmp_path / name
        args[name] = [
            "evaluate-policy",
            "--model",
            str(model),
            "--problems",
            str(problems),
            "--split",
            "train",
            "--samples",
            "3",
            "--k",
            "1",
            "--k",
            "3",
            "--config",
            str(cfg),
            "--name",
            name,
            "--out",
            str(outs[name]),
        ]
        res = runner.invoke(app, args[name])
        assert res.exit_code == 0, res.output
        assert "nothing ran" not in res.output
        assert json.loads((outs[name] / "_stage.json").read_text())["stage"] == "policy-eval"

    # POLICY_EVAL's marker: the same policy, problems and settings again execute nothing.
    written = (outs["hot"] / "report.json").stat().st_mtime_ns
    res = runner.invoke(app, args["hot"])
    assert res.exit_code == 0 and "reused (nothing ran)" in res.output, res.output
    assert (outs["hot"] / "report.json").stat().st_mtime_ns == written

    report = json.loads((outs["hot"] / "report.json").read_text())
    assert report["problems"] == 7 and report["samples_per_problem"] == 3
    p1, p3 = report["pass"]["pass@1"], report["pass"]["pass@3"]
    assert p1["ci_low"] <= p1["value"] <= p1["ci_high"] and p3["value"] >= p1["value"]
    assert (
        report["length"]["chars"]["mean"] > 0 and report["length"]["tokens"]["median"] is not None
    )
    assert report["ruff"]["programs"] > 0 and set(report["ruff"]["by_severity"]) == {
        "error",
        "warning",
        "convention",
    }
    types = {k: v["count"] for k, v in report["errors"]["by_type"].items()}
    assert sum(types.values()) == 21
    assert types["AC"] > 0 and sum(v for k, v in types.items() if k != "AC") > 0, (
        types
    )  # real verdicts, both kinds
    samples = pq.read_table(outs["hot"] / "samples.parquet")
    per_problem = pq.read_table(outs["hot"] / "per_problem.parquet").to_pylist()
    assert samples.num_rows == 21 and len(per_problem) == 7
    assert sum(r["c"] for r in per_problem) == types["AC"]
    assert {"length.png", "ruff_severity.png", "error_types.png"} <= {
        p.name for p in outs["hot"].iterdir()
    }
    assert "## Ruff profile" in (outs["hot"] / "report.md").read_text()

    res = runner.invoke(
        app, ["compare-policy-reports", str(outs["cool"]), str(outs["hot"]), "--out", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    cmp = json.loads((tmp_path / "comparison.json").read_text())
    assert [r["policy"] for r in cmp["rows"]] == ["cool", "hot"] and cmp["baseline"] == "cool"
    [diff] = cmp["differences"]
    cool = json.loads((outs["cool"] / "report.json").read_text())["pass"]["pass@1"]["value"]
    assert diff["pass@1"]["difference"] == pytest.approx(p1["value"] - cool)
