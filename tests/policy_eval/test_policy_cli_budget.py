"""The RLVR path as a newcomer walks it: `fit-policy` fits the train split only, and
`evaluate-policy` on that tiny policy (a context of a few hundred tokens) fits its default
budget to the context instead of failing every sample, takes the sampling knobs as
options, and reports samples that fail anyway per reason in one line. Real parts: the
fitted tiny policy and the transformers backend on CPU; no Docker (sampling only, or
every sample fails before judging)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from aletheia.cli import app
from pipeline.errors import UserError
from tests.policy_eval.mbpp_policy import demo_problems, fit_demo_policy

pytestmark = pytest.mark.slow


def _context(model: Path) -> int:
    return json.loads((model / "config.json").read_text())["max_position_embeddings"]


def _splits(problems: Path) -> list[str | None]:
    return pq.read_table(problems, columns=["source_split"]).column(0).to_pylist()


def test_fit_policy_fits_the_train_split_unless_told(tmp_path: Path) -> None:
    problems = demo_problems()
    splits = _splits(problems)
    runner = CliRunner()
    args = ["fit-policy", "-p", str(problems), "--steps", "2"]
    res = runner.invoke(app, [*args, "-o", str(tmp_path / "train")])
    assert res.exit_code == 0, res.output
    fit = json.loads(res.output[res.output.index("{") :])
    assert fit["split"] == "train" and fit["problems"] == splits.count("train") < len(splits)

    res = runner.invoke(app, [*args, "-o", str(tmp_path / "all"), "--split", "all"])
    assert res.exit_code == 0, res.output
    every = json.loads(res.output[res.output.index("{") :])
    assert every["problems"] == len(splits) and every["examples"] > fit["examples"]
    assert every["key"] != fit["key"]  # a different fit, cached apart

    res = runner.invoke(app, [*args, "-o", str(tmp_path / "x"), "--split", "tran"])
    assert isinstance(res.exception, UserError)
    assert "no problem in" in str(res.exception) and "--split all" in str(res.exception)


def test_evaluate_policy_fits_an_unset_budget_to_the_context(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model, problems = fit_demo_policy(), demo_problems()
    context = _context(model)
    assert context < 512  # the default budget does not fit: the case of the issue
    args = ["evaluate-policy", "--model", str(model), "-p", str(problems), "--sample-only"]
    with caplog.at_level(logging.WARNING):
        res = CliRunner().invoke(
            app, [*args, "--limit", "2", "--samples", "2", "-o", str(tmp_path / "a")]
        )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output[res.output.index("{") :])
    assert out["sampled"] == 4 and out["stats"]["generation_errors"] == 0
    assert "max_tokens: the default 512 does not fit" in caplog.text
    rows = pq.read_table(tmp_path / "a" / "shards").to_pylist()
    budgets = {r["max_tokens"] for r in rows}
    assert len(budgets) == 1 and budgets.pop() < context
    assert all(r["prompt_tokens"] + r["max_tokens"] <= context for r in rows)

    # The sampling knobs are options; a budget given is used as given, with no warning.
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        res = CliRunner().invoke(
            app,
            [*args, "--limit", "1", "--max-tokens", "16", "--temperature", "0.7", "--top-p",
             "0.9", "--seed", "5", "-o", str(tmp_path / "b")],
        )  # fmt: skip
    assert res.exit_code == 0, res.output
    row = pq.read_table(tmp_path / "b" / "shards").to_pylist()[0]
    assert (row["max_tokens"], row["temperature"], row["top_p"]) == (16, 0.7, 0.9)
    assert "does not fit" not in caplog.text


def test_samples_that_fail_are_counted_per_reason_in_one_line(tmp_path: Path) -> None:
    model, problems = fit_demo_policy(), demo_problems()
    too_many = str(_context(model) + 1)  # chosen by the user: kept, so every sample fails
    res = CliRunner().invoke(
        app,
        ["evaluate-policy", "--model", str(model), "-p", str(problems), "--limit", "1",
         "--samples", "2", "--max-tokens", too_many, "-o", str(tmp_path)],
    )  # fmt: skip
    assert isinstance(res.exception, UserError), res.output
    message = str(res.exception)
    assert message.startswith("2 of 2 samples failed to generate: prompt_too_long x2 (e.g. ")
    assert f" + {too_many} tokens > {_context(model)})" in message
    assert "give a smaller --max-tokens" in message and "run again" in message
