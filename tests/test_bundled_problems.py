"""The bundled starter problem set (data/bundled/): structure, loader errors, and every
reference solution judged in the real sandbox (correct ones AC, wrong ones not AC).

The sandbox test prints the measured pass-rate distribution of the wrong solutions.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import shutil
import time
from collections import Counter
from pathlib import Path

import pytest

from pipeline.problems.bundled import (
    DEFAULT_BUNDLED_DIR,
    BundledProblemError,
    bundled_solution_files,
    load_bundled,
    load_problem_dir,
)
from schemas.common import LANGUAGES
from schemas.ids import problem_id_for
from schemas.problem import Problem

MIN_PROBLEMS = 24
MIN_TESTS = 8


@pytest.fixture(scope="module")
def problems() -> list[Problem]:
    return load_bundled()


def _make_tests_module():
    path = DEFAULT_BUNDLED_DIR / "_tools" / "make_tests.py"
    spec = importlib.util.spec_from_file_location("bundled_make_tests", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines generators only; running references needs main()
    return module


# ------------------------------------------------------------------------------ structure


def test_set_size_ids_and_metadata(problems: list[Problem]) -> None:
    assert len(problems) >= MIN_PROBLEMS
    slugs = [p.source_id for p in problems]
    assert slugs == sorted(slugs) and len(set(slugs)) == len(slugs)
    for p in problems:
        assert p.source == "bundled"
        assert p.problem_id == problem_id_for("bundled", p.source_id)
        assert p.test_mode == "stdio" and p.contest_date is None
        assert p.title and p.license and "aletheia-pipeline" in p.license
        assert p.difficulty in {"easy", "medium", "hard"} and p.tags
        assert p.prompt_statement == p.statement
        for section in ("## Input", "## Output", "## Example"):
            assert section in p.statement, (p.source_id, section)
        assert 0 < p.time_limit_s <= 10 and p.memory_limit_mb == 256
    modes = Counter(p.compare_mode for p in problems)
    assert modes["float"] >= 1 and modes["checker"] >= 1 and modes["tokens"] >= MIN_PROBLEMS - 4
    for p in problems:
        if p.compare_mode == "float":
            assert p.float_abs_tol or p.float_rel_tol
        if p.compare_mode == "checker":
            assert p.checker and "sys.argv" in p.checker


def test_each_problem_has_tests_and_solutions(problems: list[Problem]) -> None:
    wrong_by_language: Counter[str] = Counter()
    for p in problems:
        assert len(p.tests) >= MIN_TESTS, p.source_id
        assert all(t.input is not None and t.output for t in p.tests), p.source_id
        correct = Counter(s.language for s in p.solutions if s.correct)
        assert correct == Counter(LANGUAGES), (p.source_id, correct)
        wrong = [s for s in p.solutions if not s.correct]
        assert len(wrong) >= 2, p.source_id
        wrong_by_language.update(s.language for s in wrong)
    assert all(wrong_by_language[lang] >= 10 for lang in LANGUAGES), wrong_by_language


def test_java_public_class_names_vary(problems: list[Problem]) -> None:
    names = Counter()
    for p in problems:
        for s in p.solutions:
            if s.language == "java":
                m = re.search(r"public\s+class\s+(\w+)", s.code)
                assert m, p.source_id
                names[m.group(1)] += 1
    assert names["Main"] > 0 and set(names) - {"Main"}, names


def test_statement_example_is_the_first_test(problems: list[Problem]) -> None:
    """The worked example in each statement matches tests[0] (the reference's own output)."""
    for p in problems:
        example = p.statement.split("## Example", 1)[1]
        blocks = re.findall(r"```\n(.*?)```", example, flags=re.DOTALL)
        assert len(blocks) >= 2, p.source_id
        sample_in, sample_out = blocks[0], blocks[1]
        assert sample_in.split() == p.tests[0].input.split(), p.source_id
        assert sample_out.split() == p.tests[0].output.split(), p.source_id


def test_test_inputs_come_from_the_seeded_generator(problems: list[Problem]) -> None:
    """tests.json inputs are exactly what _tools/make_tests.py generates from its fixed seed."""
    tools = _make_tests_module()
    assert set(tools.GENERATORS) == {p.source_id for p in problems}
    for p in problems:
        rng = random.Random(f"{tools.SEED}:{p.source_id}")
        assert tools.GENERATORS[p.source_id](rng) == [t.input for t in p.tests], p.source_id


def test_bundled_data_stays_small() -> None:
    total = sum(f.stat().st_size for f in DEFAULT_BUNDLED_DIR.rglob("*") if f.is_file())
    assert total < 5 * 1024 * 1024, total


def test_solution_files_listing(problems: list[Problem]) -> None:
    rows = bundled_solution_files()
    assert len(rows) == sum(len(p.solutions) for p in problems)
    ids = {p.problem_id for p in problems}
    for pid, language, path, correct in rows:
        assert pid in ids and language in LANGUAGES and path.is_file()
        assert correct == (path.stem == "correct")


# ------------------------------------------------------------------------------ loader errors


def _copy_problem(tmp_path: Path, slug: str = "budget-pairs") -> Path:
    dst = tmp_path / "set" / slug
    shutil.copytree(DEFAULT_BUNDLED_DIR / slug, dst)
    return dst


def test_loader_copy_round_trips(tmp_path: Path) -> None:
    pdir = _copy_problem(tmp_path)
    [p] = load_bundled(pdir.parent)
    assert p == next(q for q in load_bundled() if q.source_id == "budget-pairs")


@pytest.mark.parametrize(
    "break_it, names",
    [
        (lambda d: (d / "problem.yaml").unlink(), "problem.yaml"),
        (lambda d: (d / "problem.yaml").write_text("title: [unclosed\n"), "problem.yaml"),
        (
            lambda d: (d / "problem.yaml").write_text("title: x\nstatement: y\ncolour: red\n"),
            "colour",
        ),
        (lambda d: (d / "problem.yaml").write_text("title: x\nstatement: ''\n"), "statement"),
        (lambda d: (d / "tests.json").write_text("{not json"), "tests.json"),
        (lambda d: (d / "tests.json").write_text('[{"input": "1\\n"}]'), "test 0"),
        (lambda d: (d / "tests.json").unlink(), "no tests"),
        (lambda d: (d / "solutions" / "notes.txt").write_text("hi"), "notes.txt"),
        (lambda d: (d / "solutions" / "maybe.py").write_text("print(1)"), "maybe.py"),
        (lambda d: shutil.rmtree(d / "solutions"), "solutions"),
    ],
)
def test_loader_errors_name_the_folder_and_file(tmp_path: Path, break_it, names: str) -> None:
    pdir = _copy_problem(tmp_path)
    break_it(pdir)
    with pytest.raises(BundledProblemError) as info:
        load_problem_dir(pdir)
    message = str(info.value)
    assert "budget-pairs" in message and names in message


def test_loader_reads_tests_folder_layout(tmp_path: Path) -> None:
    pdir = _copy_problem(tmp_path)
    tests = json.loads((pdir / "tests.json").read_text())
    (pdir / "tests.json").unlink()
    (pdir / "tests").mkdir()
    for i, t in enumerate(tests):
        (pdir / "tests" / f"{i:02d}.in").write_text(t["input"])
        (pdir / "tests" / f"{i:02d}.out").write_text(t["output"])
    p = load_problem_dir(pdir)
    assert [(t.input, t.output) for t in p.tests] == [(t["input"], t["output"]) for t in tests]
    (pdir / "tests" / "00.out").unlink()
    with pytest.raises(BundledProblemError, match="00.in"):
        load_problem_dir(pdir)


def test_missing_root_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BundledProblemError, match="does not exist"):
        load_bundled(tmp_path / "nowhere")


# ------------------------------------------------------------------------------ sandbox


def _why(result) -> str:
    """A verdict with the evidence: sandbox error, compiler output, or the first failing stderr."""
    bad = next((t for t in result.tests if t.verdict != "AC"), None)
    detail = result.error or result.compile_output or (bad.stderr_tail if bad else "") or ""
    return f"{result.verdict} {result.passed}/{result.total} {detail.strip()[-300:]}"


@pytest.mark.docker
def test_every_reference_solution_in_the_sandbox(problems: list[Problem], sandbox_client) -> None:
    """Correct solutions are AC; wrong ones fail some tests and pass others, never CE/SE.

    Pass rates are measured here (cache off) and must spread: near misses for the Hard split
    (0.7-0.9) and clear failures (<= 0.5).
    """
    from sandbox import CompareSpec, JudgeRequest
    from sandbox import TestCase as SbTest

    requests, meta = [], []
    for p in problems:
        tests = [SbTest(input=t.input, output=t.output) for t in p.tests]
        compare = CompareSpec(
            mode=p.compare_mode, abs_tol=p.float_abs_tol, rel_tol=p.float_rel_tol, checker=p.checker
        )
        for s in p.solutions:
            requests.append(
                JudgeRequest(
                    language=s.language,
                    source=s.code,
                    mode="stdio",
                    tests=tests,
                    time_limit_s=p.time_limit_s,
                    memory_limit_mb=p.memory_limit_mb,
                    compare=compare,
                )
            )
            meta.append((p.source_id, s))

    started = time.perf_counter()
    # use_cache=False: every verdict and pass rate is measured in this run, not recalled
    results = sandbox_client.judge(requests, progress=False, use_cache=False)
    elapsed = time.perf_counter() - started

    failures, wrong_rates = [], []
    for (slug, s), r in zip(meta, results):
        label = f"{slug} {s.language} {'correct' if s.correct else 'wrong'}"
        if s.correct:
            if r.verdict != "AC":
                failures.append(f"{label}: {_why(r)}")
        else:
            # every wrong solution is written to pass some tests (at least the example);
            # failing all of them means the program never really ran (e.g. wrong main class)
            if r.verdict in ("AC", "CE", "SE") or r.passed == 0:
                failures.append(f"{label}: {_why(r)}")
            wrong_rates.append((round(r.pass_rate, 3), r.verdict, label))
    assert not failures, "\n".join(failures)

    rates = [rate for rate, _, _ in wrong_rates]
    near_miss = sum(0.7 <= x <= 0.9 for x in rates)
    low = sum(x <= 0.5 for x in rates)
    print(f"\njudged {len(requests)} solutions of {len(problems)} problems in {elapsed:.1f}s")
    print(f"wrong solutions: {len(rates)}; pass rate in [0.7, 0.9]: {near_miss}; <= 0.5: {low}")
    print("pass-rate histogram:", dict(sorted(Counter(rates).items())))
    print("wrong verdicts:", dict(Counter(v for _, v, _ in wrong_rates)))
    assert near_miss >= 5, wrong_rates
    assert low >= 10, wrong_rates
