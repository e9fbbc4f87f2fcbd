"""bench/synthetic_corpus.py is deterministic for a seed, and bench/bench_build_growth.py at a
tiny size prints every stage of the build with positive figures (two sizes of 4 and 5
problems, 3 tests at the median: about 6 minutes on a loaded 2-core machine, most of it the
tiny models' fixed costs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from synthetic_corpus import TEMPLATES, problem, write_corpus


def test_corpus_is_deterministic_for_a_seed(tmp_path):
    a = write_corpus(9, tmp_path / "a.parquet", seed=3)
    b = write_corpus(9, tmp_path / "b.parquet", seed=3)
    assert a.read_bytes() == b.read_bytes()
    assert write_corpus(9, tmp_path / "c.parquet", seed=4).read_bytes() != a.read_bytes()
    # problem i does not depend on the corpus size: a bigger corpus extends a smaller one
    assert problem(5, 3) == problem(5, 3)


def test_corpus_rows_have_aletheia_shape():
    for i in range(len(TEMPLATES)):
        row = problem(i, 0)
        assert sorted(row["solutions"]["language"]) == [2, 3, 4]  # C++, Python 3, Java
        assert row["incorrect_solutions"]["solution"]
        tests = sum(
            len(row[k]["input"]) for k in ("public_tests", "private_tests", "generated_tests")
        )
        assert 4 <= tests <= 44
        assert "Input" in row["description"] and "Output" in row["description"]


@pytest.mark.docker
@pytest.mark.slow
def test_bench_prints_every_stage_with_positive_figures(tmp_path):
    from pipeline.node_names import NODES

    out = tmp_path / "growth.json"
    run = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_build_growth.py"), "--sizes", "0.15,0.2",
         "--tests-median", "3", "--partial", "--out", str(tmp_path / "bench"), "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    got = json.loads(out.read_text())
    # every node the config runs: all but the policy fits (no policies) and push (no push)
    expected = [n for n in NODES if n not in ("fit-policy", "push")]
    for r in got["runs"]:
        assert r["failed"] is None, r["failed"]
        assert list(r["stages"]) == expected
        for name, figures in r["stages"].items():
            for f in ("wall_s", "cpu_s", "peak_mb", "disk_mb"):
                assert figures[f] > 0, (r["problems"], name, f, figures[f])
    assert set(got["exponents"]) == {*expected, "total"}
    for name in expected:
        assert name in run.stdout  # the table names every stage


def test_growth_config_for_a_node_without_docker(tmp_path):
    """`--engine process --pool-size 16` (a GPU node: no Docker) gives a run config that loads,
    with the process engine, no image and 16 programs at once; the default keeps the demo's."""
    import yaml
    from bench_build_growth import growth_config

    from pipeline.config import load_run_config

    corpus = write_corpus(3, tmp_path / "corpus.parquet", seed=0)
    for engine, pool, want in (("process", 16, 16), ("docker", None, 2)):
        path = tmp_path / f"{engine}.yaml"
        raw = growth_config(corpus, tmp_path / engine, 1, engine=engine, pool_size=pool)
        path.write_text(yaml.safe_dump(raw, sort_keys=False))
        cfg = load_run_config(path)
        assert (cfg.sandbox.engine, cfg.sandbox.pool_size, cfg.sandbox.image) == (
            engine,
            want,
            None,
        )
