"""Invariants 1, 2, 4 and 5 on the bundled problems with REAL sandbox verdicts.

One judge call for the module: the bundled problems' reference solutions (weak pool, and
the same programs again as the strong pool under another generator name, as the demo
does), tree-sitter mutants of the correct ones, and a small probe problem whose programs
print their own line number, so that a header comment really changes their output: the
adversarial re-judge must catch that and reject the edit.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.runner import run_stage
from pipeline.common.stage import MARKER
from pipeline.instances.adversarial.apply import carries_verdict, targets
from pipeline.instances.adversarial.catalogue import BY_NAME
from pipeline.instances.adversarial.config import AdversarialConfig
from pipeline.instances.adversarial.rejudge import planned_edits
from pipeline.instances.adversarial.stage import ADVERSARIAL, ADVERSARIAL_EDITS
from pipeline.instances.assemble import assemble_frames
from pipeline.instances.checks import disjoint_problem_violations, instance_violations
from pipeline.instances.config import AssembleConfig, SplitSpec
from pipeline.instances.dpo.config import DPOConfig
from pipeline.instances.stage import adversarial, adversarial_edits, assemble, build_dpo
from pipeline.judge.config import JudgeConfig
from pipeline.judge.stage import judge_candidates, judge_request, load_problems
from pipeline.problems.bundled import load_bundled
from pipeline.sampling.mutants import mutant_candidates
from pipeline.sampling.references import reference_candidates
from pipeline.splits.config import SplitConfig
from pipeline.splits.stage import split_problems
from schemas import CANDIDATE_SCHEMA, INSTANCE_SCHEMA, PROBLEM_SCHEMA, Candidate, Problem, TestCase
from schemas.dpo import DPO_SCHEMA
from schemas.ids import candidate_id_for, problem_id_for
from schemas.tables import models_to_table

pytestmark = pytest.mark.docker

PROBE_CORRECT = "input()\nprint(3)\n"
PROBE_LINENO = (
    "import inspect\nprint(inspect.currentframe().f_lineno)\n"  # 2 -> WA; 3 after a header: AC
)
PROBE_LINENO_C = (
    "import inspect\ns = input()\nprint(inspect.currentframe().f_lineno if s != 'c' else 0)\n"
)


def probe_problem() -> Problem:
    return Problem(
        problem_id=problem_id_for("test", "three"),
        source="test",
        source_id="three",
        title="Three",
        statement="Read one word and print the number 3.",
        test_mode="stdio",
        tests=[TestCase(input=w + "\n", output="3\n") for w in "abc"],
    )


def _probe_candidates() -> list[Candidate]:
    pid = probe_problem().problem_id
    return [
        Candidate(
            candidate_id=candidate_id_for("python", code),
            problem_id=pid,
            language="python",
            code=code,
            origin="reference",
            generator="reference:test",
            tier="weak",
        )
        for code in (PROBE_CORRECT, PROBE_LINENO, PROBE_LINENO_C)
    ]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory, sandbox_client: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("instances-e2e")
    problems = load_bundled()
    write_parquet(
        models_to_table(problems, PROBLEM_SCHEMA), tmp / "problems.parquet", PROBLEM_SCHEMA
    )
    write_parquet(
        models_to_table([*problems, probe_problem()], PROBLEM_SCHEMA),
        tmp / "all_problems.parquet",
        PROBLEM_SCHEMA,
    )
    split_problems(
        tmp / "problems.parquet",
        tmp / "splits",
        SplitConfig(heldout_fraction=0.4),
        show_progress=False,
    )

    weak = reference_candidates(problems, tier="weak")
    strong = [
        c.model_copy(update={"generator": "reference-strong:bundled", "tier": "strong"})
        for c in reference_candidates(problems, tier="strong")
    ]
    correct = [c for c in weak if c.reference_correct and c.language != "java"]
    mutants = mutant_candidates(correct, per_candidate=2, seed=0)
    cands = weak + strong + mutants + _probe_candidates()
    write_parquet(
        models_to_table(cands, CANDIDATE_SCHEMA), tmp / "candidates.parquet", CANDIDATE_SCHEMA
    )
    judge_stats = judge_candidates(
        tmp / "candidates.parquet",
        tmp / "all_problems.parquet",
        tmp / "judged_all.parquet",
        JudgeConfig(progress=False),
        client=sandbox_client,
    )
    judged = pl.read_parquet(tmp / "judged_all.parquet")
    probe_id = probe_problem().problem_id
    write_parquet(
        judged.filter(pl.col("problem_id") != probe_id).to_arrow(), tmp / "judged.parquet"
    )
    return {"tmp": tmp, "judged": judged, "probe_id": probe_id, "judge_stats": judge_stats}


# What configs/demo.yaml uses: candidates of one language across generators (references +
# mutants), Aletheia's selection with a single incorrect pass rate allowed to make a pair
# (few tests per bundled problem give few distinct rates); the listwise evaluation sets
# with the demo's small `test` split.
def _config(seed: int = 0) -> AssembleConfig:
    return AssembleConfig(
        seed=seed,
        grouping="language",
        spare_incorrect_rates=0,
        splits=[
            SplitSpec(name="train", problems="train"),
            SplitSpec(name="heldout", problems="heldout", test_rows_per_stratum=4),
            SplitSpec(name="strong", tier="strong", problems="heldout", test_rows_per_stratum=4),
            SplitSpec(name="hard", band="hard", problems="heldout", test_rows_per_stratum=4),
        ],
    )


def test_evaluation_sets_are_lists_with_a_test_split(assembled: dict[str, Any]) -> None:
    # the weak pool (references + mutants) has enough distinct pass rates for lists; the
    # strong pool here is the references alone (few rates: pairs), unlike the demo's
    heldout = _table(assembled["dir"] / "heldout.test.parquet").to_pylist()
    assert max(r["num_candidates"] for r in heldout) >= 3  # lists, not only pairs
    for name in ("heldout", "strong", "hard"):
        full = _table(assembled["dir"] / f"{name}.parquet").to_pylist()
        test = _table(assembled["dir"] / f"{name}.test.parquet").to_pylist()
        assert test, name
        per_stratum = Counter((r["num_candidates"], r["language"]) for r in test)
        assert max(per_stratum.values()) <= 4, name
        ids = {r["instance_id"] for r in full}
        assert all(r["instance_id"] in ids for r in test), name


@pytest.fixture(scope="module")
def assembled(work: dict[str, Any]) -> dict[str, Any]:
    tmp = work["tmp"]
    args = (tmp / "judged.parquet", tmp / "problems.parquet", tmp / "splits")
    stats = assemble(*args, tmp / "assembled", _config())
    stats_again = assemble(*args, tmp / "assembled_again", _config())
    return {
        "stats": stats,
        "stats_again": stats_again,
        "dir": tmp / "assembled",
        "again": tmp / "assembled_again",
    }


def _table(path: Path) -> Any:
    return read_parquet(path, INSTANCE_SCHEMA)


def test_real_verdicts_cover_every_kind_needed(work: dict[str, Any]) -> None:
    verdicts = work["judged"].get_column("verdict").value_counts()
    counts = dict(verdicts.iter_rows())
    assert counts.get("AC", 0) >= 3 * 20  # every bundled problem's correct solutions
    assert sum(v for k, v in counts.items() if k not in ("AC", "SE")) >= 40
    assert counts.get("SE", 0) == 0


def test_invariant_1_exactly_one_ac_and_no_se(
    assembled: dict[str, Any], work: dict[str, Any]
) -> None:
    judged = {
        r["candidate_id"]: r
        for r in work["judged"].select("candidate_id", "verdict", "pass_rate").to_dicts()
    }
    for name in ("train", "heldout", "strong", "hard"):
        table = _table(assembled["dir"] / f"{name}.parquet")
        assert table.num_rows > 0, name
        assert instance_violations(table) == [], name
        for row in table.to_pylist():
            # the verdicts column is the sandbox's: look every candidate up in the judged table
            assert [judged[c]["verdict"] for c in row["candidate_ids"]] == row["verdicts"]
            assert [judged[c]["pass_rate"] for c in row["candidate_ids"]] == row["pass_rates"]
            assert row["verdicts"].count("AC") == 1 and "SE" not in row["verdicts"]
    hard = _table(assembled["dir"] / "hard.parquet").to_pylist()
    assert all(
        0.7 <= p <= 0.9
        for r in hard
        for i, p in enumerate(r["pass_rates"])
        if i != r["chosen_position"]
    )


def test_invariant_2_no_problem_in_train_and_an_eval_split(
    assembled: dict[str, Any], work: dict[str, Any]
) -> None:
    train = _table(assembled["dir"] / "train.parquet")
    evals = [_table(assembled["dir"] / f"{n}.parquet") for n in ("heldout", "strong", "hard")]
    assert disjoint_problem_violations(train, evals) == []
    assignments = pq.read_table(work["tmp"] / "splits" / "assignments.parquet").to_pylist()
    split_of = {r["problem_id"]: r["split"] for r in assignments}
    # near-duplicates share a cluster, and a cluster has one split: no cluster on both sides
    cluster_of = {r["problem_id"]: r["cluster_id"] for r in assignments}
    train_clusters = {cluster_of[p] for p in train.column("problem_id").to_pylist()}
    for t in evals:
        for p in t.column("problem_id").to_pylist():
            assert split_of[p] == "heldout" and cluster_of[p] not in train_clusters


def test_invariant_5_same_config_and_seed_give_identical_bytes(
    assembled: dict[str, Any], work: dict[str, Any]
) -> None:
    for name in ("train", "heldout", "strong", "hard"):
        assert (assembled["dir"] / f"{name}.parquet").read_bytes() == (
            assembled["again"] / f"{name}.parquet"
        ).read_bytes()
    assert assembled["stats"] == assembled["stats_again"]
    tmp = work["tmp"]
    assemble(
        tmp / "judged.parquet",
        tmp / "problems.parquet",
        tmp / "splits",
        tmp / "seed1",
        _config(seed=1),
    )
    assert (tmp / "seed1" / "train.parquet").read_bytes() != (
        assembled["dir"] / "train.parquet"
    ).read_bytes()


def _rejudge_fresh(
    rows: list[dict[str, Any]], problems: dict[str, Problem], client: Any, limit: int = 12
) -> dict[tuple[str, str], Any]:
    """Judge edited programs again, bypassing the sandbox's verdict cache: every bias type
    that was used at least once, then more up to `limit`."""
    todo: dict[tuple[str, str], tuple[str, str, str]] = {}
    for r in rows:
        for code, lang, tag in zip(
            r["candidates"], r["candidate_languages"], r["adversarial"], strict=True
        ):
            if tag is not None:
                todo.setdefault((r["problem_id"], candidate_id_for(lang, code)), (lang, code, tag))
    first_of_type: dict[str, tuple[str, str]] = {}
    for k, (_, _, tag) in sorted(todo.items()):
        first_of_type.setdefault(tag, k)
    keys = sorted(set(first_of_type.values()))
    keys += [k for k in sorted(todo) if k not in keys][: max(0, limit - len(keys))]
    requests = [
        judge_request(
            Candidate(
                candidate_id=k[1],
                problem_id=k[0],
                language=todo[k][0],
                code=todo[k][1],
                origin="policy",
                generator="t",
                tier="weak",
            ),
            problems[k[0]],
            JudgeConfig(progress=False),
        )
        for k in keys
    ]
    results = client.judge(requests, use_cache=False)
    return dict(zip(keys, results, strict=True))


def _source_of(row: dict[str, Any], src: list[dict[str, Any]], edited: set[int]) -> dict[str, Any]:
    """The input row an Adv/Mixed row was made from: same problem, verdicts, pass rates and
    the same programs at every position it did not edit."""
    found = [
        s
        for s in src
        if s["problem_id"] == row["problem_id"]
        and s["verdicts"] == row["verdicts"]
        and s["pass_rates"] == row["pass_rates"]
        and all(
            s["candidate_ids"][i] == row["candidate_ids"][i]
            for i in range(row["num_candidates"])
            if i not in edited
        )
    ]
    assert found, row["instance_id"]
    return found[0]


def _check_per_row(row: dict[str, Any], src: list[dict[str, Any]]) -> dict[str, Any]:
    """One bias type per row: every target of its role edited with it, the rest untouched."""
    bias = BY_NAME[row["modification"]]
    edited = {i for i, t in enumerate(row["adversarial"]) if t is not None}
    assert edited == set(targets(bias, row)), (row["modification"], row["adversarial"])
    assert {row["adversarial"][i] for i in edited} == {bias.name}
    before = _source_of(row, src, edited)
    for i in range(row["num_candidates"]):
        same = row["candidates"][i] == before["candidates"][i]
        assert same == (i not in edited)
    return before


def test_invariant_4_adversarial_edits_keep_every_verdict(
    assembled: dict[str, Any], work: dict[str, Any], sandbox_client: Any
) -> None:
    """Adv, Aletheia's construction, over the whole catalogue on a few Heldout rows: one
    copy per (row, bias type) that applied, every edited program re-judged unchanged."""
    tmp = work["tmp"]
    heldout = _table(assembled["dir"] / "heldout.parquet").slice(0, 4)
    write_parquet(heldout, tmp / "heldout4.parquet", INSTANCE_SCHEMA)
    src = heldout.to_pylist()
    cfg = AdversarialConfig(seed=3, bias_types=None)
    stats = adversarial(
        tmp / "heldout4.parquet", tmp / "problems.parquet", tmp / "adv", cfg, sandbox_client
    )
    adv = _table(tmp / "adv" / "adv.parquet")
    assert instance_violations(adv) == []
    rows = adv.to_pylist()
    assert len(rows) == stats["row_copies_kept"] > len(src)
    assert stats["rows_with_edits"] == len(rows)  # Adv: every row carries one bias type
    pairs = [(_check_per_row(r, src)["instance_id"], r["modification"]) for r in rows]
    assert len(set(pairs)) == len(pairs)  # at most one copy per (row, type)
    used = {r["modification"] for r in rows}
    assert len(used) >= 15, sorted(set(BY_NAME) - used)
    assert len({r["instance_id"] for r in rows}) == len(rows)
    fresh = _rejudge_fresh(rows, load_problems(tmp / "problems.parquet"), sandbox_client)
    checked: set[str] = set()
    for row in rows:
        for i, tag in enumerate(row["adversarial"]):
            result = fresh.get((row["problem_id"], row["candidate_ids"][i]))
            if tag is not None and result is not None:  # judged again here from scratch
                assert result.verdict == row["verdicts"][i]
                assert result.pass_rate == row["pass_rates"][i]
                checked.add(tag)
    assert checked == used  # every bias type used was verified independently


def test_mixed_gives_one_bias_type_to_the_configured_share_only(
    assembled: dict[str, Any], work: dict[str, Any], sandbox_client: Any
) -> None:
    tmp = work["tmp"]
    src = _table(assembled["dir"] / "train.parquet").to_pylist()
    stats = adversarial(
        assembled["dir"] / "train.parquet",
        tmp / "problems.parquet",
        tmp / "mixed",
        AdversarialConfig.mixed(seed=1),
        sandbox_client,
    )
    rows = _table(tmp / "mixed" / "mixed.parquet").to_pylist()
    assert len(rows) == len(src) and stats["selected"] == round(0.25 * len(src))
    edited = [r for r in rows if r["modification"] is not None]
    assert 0 < len(edited) <= stats["selected"]
    for r in edited:
        _check_per_row(r, src)
    untouched = [(a, b) for a, b in zip(src, rows, strict=True) if b["modification"] is None]
    assert len(untouched) >= len(src) - stats["selected"]
    assert all(a["candidates"] == b["candidates"] and b["split"] == "mixed" for a, b in untouched)
    assert all(all(t is None for t in b["adversarial"]) for _, b in untouched)


def _probe_heldout(work: dict[str, Any]) -> Path:
    """The probe problem's one Heldout row (both line-number programs beside the correct one)."""
    tmp = work["tmp"]
    probe = work["judged"].filter(pl.col("problem_id") == work["probe_id"])
    problems = pl.from_arrow(pq.read_table(tmp / "all_problems.parquet"))
    cfg = AssembleConfig(  # balanced: the one 3-candidate row with both probe programs
        selection="balanced",
        easy_max_pass_rate=0.7,
        splits=[SplitSpec(name="heldout", problems="heldout")],
    )
    tables, _, _ = assemble_frames(
        probe, problems, pl.DataFrame({"problem_id": [work["probe_id"]], "split": ["heldout"]}), cfg
    )
    assert tables["heldout"].num_rows == 1
    return write_parquet(tables["heldout"], tmp / "probe" / "heldout.parquet", INSTANCE_SCHEMA)


def test_an_edit_that_changes_behaviour_is_rejected(
    work: dict[str, Any], sandbox_client: Any
) -> None:
    tmp = work["tmp"]
    probe = work["judged"].filter(pl.col("problem_id") == work["probe_id"])
    by_code = {r["code"]: r for r in probe.to_dicts()}
    assert by_code[PROBE_LINENO]["verdict"] == "WA" and by_code[PROBE_LINENO]["passed"] == 0
    assert by_code[PROBE_LINENO_C]["verdict"] == "WA" and by_code[PROBE_LINENO_C]["passed"] == 2
    _probe_heldout(work)
    stats = adversarial(
        tmp / "probe" / "heldout.parquet",
        tmp / "all_problems.parquet",
        tmp / "probe_adv",
        AdversarialConfig(bias_types=["authority", "reverse_authority"]),
        sandbox_client,
    )
    assert stats["by_bias"]["authority"]["rejected_verdict_changed"] == 1  # WA -> AC: caught
    assert stats["by_bias"]["authority"]["rejected_pass_rate_changed"] == 1  # 2/3 -> 0/3: caught
    assert stats["by_bias"]["authority"]["copies_rejected_by_rejudge"] == 1  # so no such row
    assert stats["by_bias"]["reverse_authority"]["accepted"] == 1
    (row,) = _table(tmp / "probe_adv" / "adv.parquet").to_pylist()
    assert row["modification"] == "reverse_authority"
    for code, tag in zip(row["candidates"], row["adversarial"], strict=True):
        if code in (PROBE_LINENO, PROBE_LINENO_C):
            assert tag is None  # the rejected edit left the program as it was
        else:
            assert tag == "reverse_authority" and code.endswith(PROBE_CORRECT)


# --- the re-judge as judge shards: edits file -> judge stage -> judged table -> rows -------


def _sharded_inputs(
    case: str, assembled: dict[str, Any], work: dict[str, Any]
) -> tuple[Path, Path, AdversarialConfig]:
    """(instances, problems, config) of one case: Adv on a few Heldout rows, Mixed with the
    per-candidate construction on Train, and the probe row whose edits the re-judge rejects."""
    tmp = work["tmp"]
    if case == "adv":
        path = tmp / "shard_cases" / "heldout3.parquet"
        heldout = _table(assembled["dir"] / "heldout.parquet").slice(0, 3)
        write_parquet(heldout, path, INSTANCE_SCHEMA)
        return path, tmp / "problems.parquet", AdversarialConfig(seed=3)
    if case == "mixed_per_candidate":
        path = tmp / "shard_cases" / "train12.parquet"
        write_parquet(
            _table(assembled["dir"] / "train.parquet").slice(0, 12), path, INSTANCE_SCHEMA
        )
        cfg = AdversarialConfig.mixed(seed=1, construction="per_candidate", share=0.5)
        return path, tmp / "problems.parquet", cfg
    cfg = AdversarialConfig(bias_types=["authority", "reverse_authority"])
    return _probe_heldout(work), tmp / "all_problems.parquet", cfg


def _judge_edits(
    instances: Path, problems: Path, cfg: AdversarialConfig, out: Path, client: Any
) -> dict[str, Any]:
    """What the flow does with judge shards, in one shard: plan, then the judge stage."""
    edits = adversarial_edits(instances, problems, out / "edits", cfg)
    judge_candidates(
        out / "edits" / "edits.parquet",
        problems,
        out / "judged-edits.parquet",
        cfg.judge,
        client=client,
    )
    return edits


@pytest.mark.parametrize("case", ["adv", "mixed_per_candidate", "probe"])
def test_rejudge_from_a_judged_table_gives_identical_output(
    case: str, assembled: dict[str, Any], work: dict[str, Any], sandbox_client: Any
) -> None:
    instances, problems, cfg = _sharded_inputs(case, assembled, work)
    base = work["tmp"] / "shard_cases" / case
    edits = _judge_edits(instances, problems, cfg, base, sandbox_client)
    sharded = adversarial(
        instances, problems, base / "sharded", cfg, judged_edits=base / "judged-edits.parquet"
    )
    in_process = adversarial(instances, problems, base / "in_process", cfg, sandbox_client)
    name = f"{cfg.split}.parquet"
    assert (base / "sharded" / name).read_bytes() == (base / "in_process" / name).read_bytes()
    assert sharded == in_process
    assert sharded["edits_planned"] == edits["edits_planned"] > 0
    assert sharded["edits_not_rejudged"] == 0  # every planned edit found in the judged table
    assert sum(edits["edits_planned_by_bias"].values()) == edits["edits_planned"]
    table = pl.read_parquet(base / "edits" / "edits.parquet")
    assert table.height == edits["distinct_programs"]
    assert table.select("problem_id", "candidate_id").is_unique().all()
    rows = _table(instances).to_pylist()
    planned, _ = planned_edits(rows, cfg)
    judged = [e for e in planned if not carries_verdict(e, cfg)]  # the rest keep their verdict
    assert edits["edits_carried_unchanged"] == len(planned) - len(judged)
    assert sharded["edits_carried_unchanged"] == edits["edits_carried_unchanged"]
    assert set(table.select("problem_id", "candidate_id").iter_rows()) == {
        (e.problem_id, e.candidate_id) for e in judged
    }
    assert set(table["code"]) == {e.after for e in judged}  # the edited programs themselves
    if case == "probe":  # the rejections come out the same way too (never carried)
        assert sharded["by_bias"]["authority"]["copies_rejected_by_rejudge"] == 1
        assert sharded["by_bias"]["authority"].get("carried_unchanged", 0) == 0


def test_carried_verdicts_give_the_rows_a_full_rejudge_gives(
    assembled: dict[str, Any], work: dict[str, Any], sandbox_client: Any
) -> None:
    """Adv on Heldout rows with the edits proven unchanged carried, and with every edit
    judged again in the real sandbox: the same bytes, and most edits carried."""
    tmp = work["tmp"]
    heldout = _table(assembled["dir"] / "heldout.parquet").slice(0, 6)
    write_parquet(heldout, tmp / "carry" / "heldout6.parquet", INSTANCE_SCHEMA)
    cfg = AdversarialConfig(seed=5)
    args = (tmp / "carry" / "heldout6.parquet", tmp / "problems.parquet")
    carried = adversarial(*args, tmp / "carry" / "carried", cfg, sandbox_client)
    full = adversarial(
        *args,
        tmp / "carry" / "full",
        cfg.model_copy(update={"rejudge_unchanged": True}),
        sandbox_client,
    )
    assert full["edits_carried_unchanged"] == 0
    assert carried["edits_carried_unchanged"] > carried["edits_planned"] // 2
    assert (tmp / "carry" / "carried" / "adv.parquet").read_bytes() == (
        tmp / "carry" / "full" / "adv.parquet"
    ).read_bytes()


def test_edits_missing_from_the_judged_table_are_counted_not_rejudged(
    assembled: dict[str, Any], work: dict[str, Any], sandbox_client: Any
) -> None:
    instances, problems, cfg = _sharded_inputs("adv", assembled, work)
    cfg = cfg.model_copy(update={"rejudge_unchanged": True})  # every edit needs a verdict
    base = work["tmp"] / "shard_cases" / "missing"
    _judge_edits(instances, problems, cfg, base, sandbox_client)
    full = adversarial(
        instances, problems, base / "full", cfg, judged_edits=base / "judged-edits.parquet"
    )
    judged = pl.read_parquet(base / "judged-edits.parquet")
    gone = judged["problem_id"][0]  # one problem's verdicts never came back
    judged.filter(pl.col("problem_id") != gone).write_parquet(base / "partial.parquet")
    stats = adversarial(
        instances, problems, base / "partial", cfg, judged_edits=base / "partial.parquet"
    )
    planned, _ = planned_edits(_table(instances).to_pylist(), cfg)
    lacking = sum(1 for e in planned if e.problem_id == gone)
    assert stats["edits_not_rejudged"] == lacking > 0
    assert sum(c.get("not_rejudged", 0) for c in stats["by_bias"].values()) == lacking
    assert stats["edits_planned"] == full["edits_planned"]  # planned, then counted, not lost
    out = _table(base / "partial" / "adv.parquet").to_pylist()
    full_rows = _table(base / "full" / "adv.parquet").to_pylist()
    assert [r for r in out if r["problem_id"] == gone] == []  # no copy kept without a verdict
    assert out == [r for r in full_rows if r["problem_id"] != gone]


def _written(out: Path) -> set[Path]:
    """Every file a run left under `out`, its marker aside."""
    return {p for p in out.rglob("*") if p.is_file() and p.name != MARKER}


def test_adversarial_stage_values_write_their_outputs_and_key_what_changes_rows(
    assembled: dict[str, Any], work: dict[str, Any], sandbox_client: Any
) -> None:
    """ADVERSARIAL_EDITS, the judge stage on its programs, then ADVERSARIAL, each through
    the runner: each writes exactly what its `outputs()` names. Judge settings do not key
    the plan; the progress bar does not key the split; a verdict-changing setting does."""
    instances, problems, cfg = _sharded_inputs("adv", assembled, work)
    cfg = cfg.model_copy(update={"rejudge_unchanged": True})  # programs for the judge
    base = work["tmp"] / "stage_values"
    edits_inputs = {"instances": instances, "problems": problems}
    edits = run_stage(ADVERSARIAL_EDITS, cfg, edits_inputs, base / "edits")
    assert not edits.cached and edits.stats["distinct_programs"] > 0
    assert _written(base / "edits") == set(ADVERSARIAL_EDITS.outputs(cfg, base / "edits").values())
    judge_candidates(
        edits.path("edits"),
        problems,
        base / "judged-edits.parquet",
        cfg.judge,
        client=sandbox_client,
    )
    inputs = {**edits_inputs, "judged_edits": [base / "judged-edits.parquet"]}
    split = run_stage(ADVERSARIAL, cfg, inputs, base / "adv")
    assert not split.cached and split.stats["edits_not_rejudged"] == 0
    assert _written(base / "adv") == set(ADVERSARIAL.outputs(cfg, base / "adv").values())
    assert split.path("adv") == base / "adv" / "adv.parquet"

    slower = cfg.model_copy(update={"judge": JudgeConfig(progress=False, time_limit_scale=2.0)})
    assert run_stage(ADVERSARIAL_EDITS, slower, edits_inputs, base / "edits").cached
    shown = cfg.model_copy(update={"judge": cfg.judge.model_copy(update={"progress": True})})
    assert run_stage(ADVERSARIAL, shown, inputs, base / "adv").cached
    assert not run_stage(ADVERSARIAL, slower, inputs, base / "adv").cached


def test_a_program_two_plans_produce_is_judged_once(
    assembled: dict[str, Any], work: dict[str, Any]
) -> None:
    """Every Heldout row twice (a second instance_id): `minified` ignores its RNG, so each
    copy's edits are the same programs; the edits file holds each once."""
    rows = _table(assembled["dir"] / "heldout.parquet").to_pylist()
    twice = rows + [{**r, "instance_id": r["instance_id"] + "-again"} for r in rows]
    path = work["tmp"] / "shard_cases" / "twice.parquet"
    write_parquet(pa.Table.from_pylist(twice, schema=INSTANCE_SCHEMA), path, INSTANCE_SCHEMA)
    # every edit to the judge (a minified program is proven unchanged, so none would go)
    cfg = AdversarialConfig(bias_types=["minified"], rejudge_unchanged=True)
    stats = adversarial_edits(path, work["tmp"] / "problems.parquet", path.parent / "twice", cfg)
    table = pl.read_parquet(path.parent / "twice" / "edits.parquet")
    planned, _ = planned_edits(twice, cfg)
    keys = {(e.problem_id, e.candidate_id) for e in planned}
    assert stats["edits_planned"] == len(planned) >= 2 * len(keys) > 0
    assert stats["distinct_programs"] == table.height == len(keys)


def test_mixed_dpo_from_real_tiny_model_responses(
    work: dict[str, Any], tiny_model_dir: Path
) -> None:
    from pipeline.sampling.backends.transformers_backend import TransformersBackend

    tmp = work["tmp"]
    mixed = _table(tmp / "mixed" / "mixed.parquet")
    subset = mixed.slice(0, 4)
    write_parquet(subset, tmp / "mixed4.parquet", INSTANCE_SCHEMA)
    backend = TransformersBackend(tiny_model_dir, model_name="tiny", batch_size=8)
    cfg = DPOConfig(name="mixed_dpo", samples_per_judge=6, max_tokens=16)
    stats = build_dpo(tmp / "mixed4.parquet", tmp / "mixed_dpo", cfg, backend=backend)
    table = read_parquet(tmp / "mixed_dpo" / "mixed_dpo.parquet", DPO_SCHEMA)
    # the judges round, then the regeneration round (on by default for Aletheia's
    # construction) for the instances whose 6 responses were all wrong or all right
    again = sum(stats["regeneration"]["sampled_again"].values())
    assert stats["responses_by_judge"]["tiny"]["responses"] == 4 * 6 + again * 6
    # Aletheia's construction keeps every instance (gold spliced where nobody was right).
    assert table.num_rows == stats["pairs"] == 4
    from pipeline.common.answers import parse_answer
    from schemas.dpo import turn_text

    for r in table.to_pylist():
        assert parse_answer(turn_text(r["chosen"]), r["num_candidates"]) == r["chosen_answer"]
        assert parse_answer(turn_text(r["rejected"]), r["num_candidates"]) != r["chosen_answer"]
        assert r["split"] == "mixed"
        assert r["chosen_source"] in ("sampled", "regenerated", "gold_spliced")
