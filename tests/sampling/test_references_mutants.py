"""Reference candidates from sources and tree-sitter mutants of correct programs."""

from __future__ import annotations

import pytest

from pipeline.common.syntax import parses_cleanly
from pipeline.sampling.mutants import OPERATORS, mutant_candidates
from pipeline.sampling.references import reference_candidates
from schemas.ids import candidate_id_for
from schemas.problem import Solution
from tests.sampling.problems_fixture import SUM_CPP, SUM_JAVA, SUM_PY, abs_problem, sum_problem


def test_references_carry_source_claims_and_dedupe():
    p = sum_problem()
    p.solutions.append(
        Solution(language="python", code=SUM_PY + "\n\n", correct=True)
    )  # same, normalised
    refs = reference_candidates([p, abs_problem()], tier="strong", languages=["python", "cpp"])
    assert {(r.language, r.reference_correct) for r in refs if r.problem_id == p.problem_id} == {
        ("python", True),
        ("python", False),
        ("cpp", True),
    }
    assert len(refs) == 4  # java filtered, the duplicate folded
    for r in refs:
        assert r.origin == "reference" and r.generator == "reference:test" and r.tier == "strong"
        assert r.extraction == "not_applicable" and r.completion is None
        assert r.candidate_id == candidate_id_for(r.language, r.code)


def test_conflicting_claims_become_unknown():
    p = sum_problem()
    p.solutions.append(Solution(language="python", code=SUM_PY, correct=False))
    [r] = [r for r in reference_candidates([p]) if r.code == SUM_PY]
    assert r.reference_correct is None


@pytest.fixture()
def parents():
    return [r for r in reference_candidates([sum_problem(), abs_problem()]) if r.reference_correct]


def test_mutants_parse_differ_and_record_provenance(parents):
    mutants = mutant_candidates(parents, per_candidate=4, seed=1)
    by_parent = {p.candidate_id: p for p in parents}
    assert mutants
    for m in mutants:
        parent = by_parent[m.parent_candidate_id]
        assert m.origin == "mutant" and m.generator.startswith("mutant:")
        assert m.generator.removeprefix("mutant:") in OPERATORS and m.mutation
        assert m.code != parent.code and parses_cleanly(m.code, m.language)
        assert m.problem_id == parent.problem_id and m.language == parent.language
        assert m.candidate_id == candidate_id_for(m.language, m.code)
    counts = {}
    for m in mutants:
        counts[m.parent_candidate_id] = counts.get(m.parent_candidate_id, 0) + 1
    assert max(counts.values()) <= 4 and len(counts) == len(parents)


def test_mutants_are_deterministic_from_the_seed(parents):
    a = mutant_candidates(parents, seed=3)
    assert a == mutant_candidates(parents, seed=3)
    assert [m.code for m in a] != [m.code for m in mutant_candidates(parents, seed=4)]


def test_each_operator_does_its_edit(parents):
    cpp = next(p for p in parents if p.language == "cpp")
    java = next(p for p in parents if p.language == "java")
    [narrow] = mutant_candidates([cpp], operators=["narrow_int_all"])
    assert "long long" in SUM_CPP and "long long" not in narrow.code and "int a, b" in narrow.code
    [jnarrow] = mutant_candidates([java], operators=["narrow_int_all"])
    assert "nextInt()" in jnarrow.code and "long " not in jnarrow.code and "long" in SUM_JAVA
    absp = next(p for p in parents if p.problem_id == abs_problem().problem_id)
    dropped = mutant_candidates([absp], operators=["drop_branch"], per_candidate=10)
    assert any("if n == 0" in m.mutation and "exit()" not in m.code for m in dropped)
    flips = mutant_candidates([absp], operators=["flip_comparison"], per_candidate=10)
    assert {m.mutation.split(" at ")[0] for m in flips} == {
        "flip_comparison: `==` -> `!=`",
        "flip_comparison: `>` -> `<=`",
    }
    obo = mutant_candidates([absp], operators=["off_by_one"], per_candidate=10)
    assert any("range(0, (n) + 1)" in m.code for m in obo) and any(">=" in m.code for m in obo)
    arith = mutant_candidates([absp], operators=["swap_arithmetic"], per_candidate=10)
    assert arith == []  # `+=`/`-=` are assignments, not binary operators: nothing to swap
    with pytest.raises(ValueError, match="unknown mutation operator"):
        mutant_candidates(parents, operators=["nope"])


def test_incorrect_or_empty_parents_are_not_mutated():
    wrong = [r for r in reference_candidates([sum_problem()]) if r.reference_correct is False]
    assert wrong and mutant_candidates(wrong) == []
