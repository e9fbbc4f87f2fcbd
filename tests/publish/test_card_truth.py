"""The card says what the published rows hold, and nothing they do not show.

Every number the card's tables give is compared with counts made here from the Parquet
shards of the folder (plain Python, no pipeline code); the origins of a config's candidates
are said to be mixed when they are; list sizes, `generator` values and languages per row
are those of the rows; the `dataset_info` header is what `datasets.load_dataset` (the
real consumer) reads and checks; every config has an example row (one line in the card,
whole in a file); the load lines name the
repo or the folder; and the same rows give the same bytes."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
import yaml

from pipeline.common.runner import marker_dir
from pipeline.publish import CONFIG_NAMES, build_hub_folder
from pipeline.publish.layout import list_files
from schemas.dataset_configs import CONFIG_BY_NAME
from tests.publish.synthetic import as_pair, dpo_row, rewrite, with_origins


def _card(hub: Path) -> str:
    return (hub / "README.md").read_text()


def _candidates(hub: Path) -> str:
    return (hub / "details" / "candidates.md").read_text()


def _section(card: str, heading: str) -> str:
    start = card.index(heading + "\n") + len(heading) + 1
    end = card.find("\n## ", start)
    return card[start : end if end >= 0 else None]


def _md_rows(text: str, head_starts: str) -> list[dict[str, str]]:
    """The rows of the Markdown table whose header line starts with `head_starts`."""
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(head_starts))
    cells = lambda line: [c.strip() for c in line.strip().strip("|").split("|")]
    head = cells(lines[i])
    out = []
    for line in lines[i + 2 :]:
        if not line.startswith("|"):
            break
        out.append(dict(zip(head, cells(line), strict=True)))
    return out


def _rows(hub: Path, config: str, split: str) -> list[dict]:
    files = sorted((hub / config).glob(f"{split}-*.parquet"))
    return [r for f in files for r in pq.read_table(f).to_pylist()]


def _splits(hub: Path) -> list[tuple[str, str]]:
    return [(c, s) for c in CONFIG_NAMES for s in CONFIG_BY_NAME[c].splits]


def _mixed_train_all_policy_strong(build: Path) -> None:
    """Train: candidates of three origins, mixed within rows; Strong: policy samples only."""
    mixes = [
        (["policy", "reference"], ["pol-w", "reference:bundled"]),
        (["mutant", "reference"], ["mutant:off_by_one", "reference:bundled"]),
        (["policy", "mutant"], ["pol-w", "mutant:drop_branch"]),
        (["reference", "reference"], ["reference:bundled", "reference:bundled"]),
        (["policy", "policy"], ["pol-w", "pol-w"]),
        (["mutant", "policy"], ["mutant:off_by_one", "pol-w"]),
    ]
    rewrite(build, "train", lambda rows: [with_origins(r, *m) for r, m in zip(rows, mixes)])
    rewrite(build, "dpo", lambda rows: [dpo_row(with_origins(r, *m)) for r, m in zip(rows, mixes)])
    rewrite(
        build,
        "strong",
        lambda rows: [with_origins(r, ["policy"] * 2, ["pol-s", "pol-s2"]) for r in rows],
    )


def test_card_numbers_equal_counts_made_here(build_dir: Path, tmp_path: Path) -> None:
    _mixed_train_all_policy_strong(build_dir)
    hub = tmp_path / "hub"
    build_hub_folder(build_dir, hub)
    card = _card(hub)
    counts = {
        (r["config"], r["split"]): r
        for r in _md_rows(_section(card, "## Counts"), "| config | split | rows |")
    }
    origins = {  # a file of the release, linked from the card
        (r["config"], r["split"]): r
        for r in _md_rows(_section(_candidates(hub), "## By origin"), "| config | split |")
    }
    for config, split in _splits(hub):
        rows = _rows(hub, config, split)
        got = counts[(config, split)]
        assert int(got["rows"]) == len(rows), (config, split)
        assert int(got["problems"]) == len({r["problem_id"] for r in rows}), (config, split)
        if config == "train_questions":
            continue
        for n in (2, 3, 4, 5):
            assert int(got[f"{n} cand."]) == sum(r["num_candidates"] == n for r in rows)
        langs = Counter(r["language"] for r in rows)  # one per row, not per candidate
        assert got["languages (rows)"] == ", ".join(f"{k} {v}" for k, v in sorted(langs.items()))
        letters = Counter("ABCDE"[r["chosen_position"]] for r in rows)
        pos = got["correct position (A / B / C / D / E)"]
        assert pos == " / ".join(str(letters[a]) for a in "ABCDE")
        cands = [o for r in rows for o in r["candidate_origins"]]
        o = origins[(config, split)]
        assert int(o["candidates"]) == len(cands)
        for origin, col in (
            ("policy", "policy samples"),
            ("reference", "reference solutions"),
            ("mutant", "mutants"),
        ):
            assert int(o[col].split()[0]) == cands.count(origin), (config, split, origin)
        mixing = sum(len(set(r["candidate_origins"])) > 1 for r in rows)
        assert int(o["rows mixing origins"]) == mixing
        assert int(o["rows with `generator` `mixed`"]) == sum(
            r["generator"] == "mixed" for r in rows
        )
    # the hand-made mix: Train 5 policy, 4 reference, 3 mutant; 4 rows of 6 mix origins
    assert origins[("train", "train")]["policy samples"] == "5 (42%)"
    assert origins[("train", "train")]["rows mixing origins"] == "4"
    assert origins[("strong", "full")]["policy models"] == "`pol-s`, `pol-s2`"


def test_card_says_which_configs_mix_origins(build_dir: Path, tmp_path: Path) -> None:
    _mixed_train_all_policy_strong(build_dir)
    biases = ["authority", None, "fake_reference", "authority", None, "authority"]
    rewrite(build_dir, "mixed", lambda rows: [
        r | {"modification": b} for r, b in zip(rows, biases, strict=True)
    ])  # fmt: skip
    hub = tmp_path / "hub"
    build_hub_folder(build_dir, hub)
    holds = _section(_card(hub), "### What each config holds")
    train = next(line for line in holds.splitlines() if line.startswith("- **`train`**"))
    assert "**mixed origins**" in train
    assert "5 policy samples (42%, from `pol-w`)" in train
    assert "4 reference solutions (33%)" in train and "3 mutants (25%)" in train
    assert "4 of its 6 rows mix candidates of several origins" in train
    assert "`generator` is `mixed` (candidates of several generators) on 4 of 6 rows" in train
    strong = holds[holds.index("- **`strong`**") :].splitlines()
    assert "All 12 candidates are policy samples (from `pol-s`, `pol-s2`)" in strong[0]
    assert "mixed origins" not in strong[0]
    assert "All 8 candidates are policy samples" in strong[1]  # its test split: 4 pairs
    mixed = next(line for line in holds.splitlines() if line.startswith("- **`mixed`**"))
    assert "4 of 6 rows (67%) carry a bias edit (`modification`), of 2 types: authority 3, " \
        "fake_reference 1." in mixed  # fmt: skip
    # the old unmeasured claims are gone
    card = _card(hub)
    assert "weak-policy candidates" not in card and "strong policy pool" not in card


def test_card_claims_only_the_list_sizes_it_ships(build_dir: Path, tmp_path: Path) -> None:
    for name in ("train", "mixed", "heldout", "strong", "hard", "adv"):
        rewrite(build_dir, name, lambda rows: [as_pair(r) for r in rows])
    for name, src in (("dpo", "train"), ("mixed_dpo", "mixed")):
        src_rows = pq.read_table(build_dir / "final" / f"{src}.parquet").to_pylist()
        rewrite(build_dir, name, lambda rows, s=src_rows: [dpo_row(r) for r in s])
    hub = tmp_path / "hub"
    build_hub_folder(build_dir, hub)
    card = _card(hub)
    assert "In this build a\nrow holds 2 candidates (pairs only)." in card
    body = card.split("<summary>Run config")[0]
    assert not re.search(r"2[-–]5", body), "claims lists of 2-5 on a pairs-only build"
    holds = _section(card, "### What each config holds")
    # every split but train_questions': 4 training ones, test + full of 3, Adv's one
    assert holds.count("pairs (2 candidates)") == 4 + 3 * 2 + 1


def test_generator_values_listed_and_explained(build_dir: Path, tmp_path: Path) -> None:
    _mixed_train_all_policy_strong(build_dir)
    hub = tmp_path / "hub"
    build_hub_folder(build_dir, hub)
    fields = {r["field"]: r for r in _md_rows(_section(_card(hub), "## Data fields"), "| field |")}
    gen = fields["`generator`"]
    assert "`mixed` when the row's candidates come from more than one generator" in gen["meaning"]
    values = re.findall(r"`([^`]+)`", gen["values in this build"])
    rows = [r for c, s in _splits(hub) if c != "train_questions" for r in _rows(hub, c, s)]
    assert set(values) == {r["generator"] for r in rows}
    assert "mixed" in values and "pol-w" in values  # a Train row of two pol-w samples
    assert "`mixed`" in fields["`language`"]["meaning"]


@pytest.mark.usefixtures("hf_offline_env")
def test_dataset_info_header_is_what_datasets_reads(build_dir: Path, tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    stats = build_hub_folder(build_dir, hub)
    meta = yaml.safe_load(_card(hub).split("---\n")[1])
    info = {i["config_name"]: i for i in meta["dataset_info"]}
    assert sorted(info) == sorted(CONFIG_NAMES)
    for name in CONFIG_NAMES:
        cfg = CONFIG_BY_NAME[name]
        assert "features" not in info[name]  # the shards' own schema: not repeated here
        split_counts = {s["name"]: s["num_examples"] for s in info[name]["splits"]}
        assert split_counts == stats["split_rows"][name]
        shards = [hub / f for f in list_files(hub) if f.startswith(name + "/")]
        assert info[name]["download_size"] == sum(p.stat().st_size for p in shards)
        ds = datasets.load_dataset(str(hub), name, cache_dir=str(tmp_path / "cache"))
        declared = datasets.Features.from_arrow_schema(cfg.schema)
        for split in cfg.splits:
            assert ds[split].num_rows == split_counts[split]
            assert ds[split].features == declared
    # the consumer checks the header's counts: a wrong one fails the load
    _, _header, body = _card(hub).split("---\n", 2)
    info["heldout"]["splits"][0]["num_examples"] += 1
    (hub / "README.md").write_text("---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n" + body)
    with pytest.raises(datasets.exceptions.NonMatchingSplitsSizesError):
        datasets.load_dataset(str(hub), "heldout", cache_dir=str(tmp_path / "cache2"))


def test_every_config_has_an_example_row_cut_to_one_line(build_dir: Path, tmp_path: Path) -> None:
    long_program = "\n".join(f"x{i} = {i}" for i in range(50))

    def lengthen(rows: list[dict]) -> list[dict]:
        return [rows[0] | {"candidates": [long_program, *rows[0]["candidates"][1:]]}, *rows[1:]]

    rewrite(build_dir, "train", lengthen)
    hub = tmp_path / "hub"
    build_hub_folder(build_dir, hub)
    examples = _section(_card(hub), "## Example rows")
    linked = re.findall(
        r"^\| \[`(\w+)`\]\((details/examples/\w+\.yaml)\) \| `(\w+)` \|", examples, re.MULTILINE
    )
    assert sorted(c for c, _, _ in linked) == sorted(CONFIG_NAMES)  # one row per config
    for name, path, split in linked:
        assert split == CONFIG_BY_NAME[name].split
        first = _rows(hub, name, split)[0]
        assert yaml.safe_load((hub / path).read_text()) == first  # the whole row, exactly
    train = _md_rows(examples, "| config | split | `query` |")[0]
    assert train["config"].startswith("[`train`]")
    cell = train["`candidates`"]
    assert cell.startswith(f"{len(_rows(hub, 'train', 'train')[0]['candidates'])}: x0 = 0 x1 = 1")
    assert cell.endswith("…") and len(cell) < 60  # one short line, marked where cut
    dpo = _md_rows(examples, "| config | split | `prompt` |")[0]
    assert dpo["`prompt`"].startswith("&#91;user&#93; You judge solutions")
    assert dpo["`chosen`"].endswith(
        "&#92;boxed{" + _rows(hub, "dpo", "train")[0]["chosen_answer"] + "}"
    )


@pytest.mark.usefixtures("hf_offline_env")
def test_load_lines_name_the_folder_or_the_repo(
    build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = tmp_path / "hub"
    build_hub_folder(build_dir, hub)
    card = _card(hub)
    assert "<this repo or folder>" not in card
    code = card.split("```python\n")[1].split("```")[0]
    assert f'load_dataset("{hub}", "train")' in code
    assert f'load_dataset("{hub}", "heldout", split="test")' in code
    monkeypatch.chdir(tmp_path)  # the snippet runs as a reader would run it
    scope: dict = {}
    exec(code, scope)  # noqa: S102 - the card's own snippet, against the folder just built
    assert scope["ds"]["train"].num_rows == len(_rows(hub, "train", "train"))
    assert scope["heldout"].num_rows == len(_rows(hub, "heldout", "test"))
    build_hub_folder(build_dir, tmp_path / "hub2", repo_id="someone/aletheia-demo")
    assert 'load_dataset("someone/aletheia-demo", "train")' in _card(tmp_path / "hub2")
    # without the argument: the build's own hub.repo_id
    manifest = (build_dir / "build.json").read_text()
    (build_dir / "build.json").write_text(
        manifest.replace('"hf_token": "hf_nope"', '"hf_token": "hf_nope", "repo_id": "org/x"')
    )
    build_hub_folder(build_dir, tmp_path / "hub3")
    assert 'load_dataset("org/x", "heldout", split="test")' in _card(tmp_path / "hub3")


def test_same_rows_same_card_and_plots(build_dir: Path, tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    build_hub_folder(build_dir, hub)
    first = {f: (hub / f).read_bytes() for f in list_files(hub)}
    shutil.rmtree(hub)
    shutil.rmtree(marker_dir(hub, beside=True))  # no stage cache: everything is written again
    build_hub_folder(build_dir, hub)
    assert {f: (hub / f).read_bytes() for f in list_files(hub)} == first
    assert "assets/origins.png" in first


def test_example_programs_read_as_blocks() -> None:
    import pyarrow as pa

    from pipeline.publish.card_example import example_yaml

    program = "x = 1\nif x:\n    print(x)\n"
    spaced = "x = 1   \nprint(x)\n"  # a line with trailing spaces: quoted, kept exactly
    shown = example_yaml(pa.table({"candidates": [[program, spaced, "print(2)"]], "n": [2]}))
    assert shown.startswith("candidates:\n- |\n  x = 1\n  if x:\n      print(x)\n")
    assert yaml.safe_load(shown)["candidates"] == [program, spaced, "print(2)"]


def test_list_size_words_follow_the_sizes_present() -> None:
    from pipeline.publish.card_facts import sizes_phrase

    assert sizes_phrase({2: 7}) == "pairs (2 candidates)"
    assert sizes_phrase({2: 7, 3: 0, 4: 1}) == "lists of 2 or 4 candidates"  # 0 rows: absent
    assert sizes_phrase({2: 1, 3: 2, 4: 3}) == "lists of 2-4 candidates"
    assert sizes_phrase({3: 2, 5: 1, 4: 0}) == "lists of 3 or 5 candidates"
    assert sizes_phrase({2: 1, 3: 1, 5: 1}) == "lists of 2, 3 or 5 candidates"
    assert sizes_phrase({4: 2}) == "lists of 4 candidates"


def test_example_cells_are_one_short_line_of_plain_text() -> None:
    from pipeline.publish.card_example import EXCERPT_CHARS, excerpt

    assert excerpt("short\ntext") == "short text"
    assert excerpt("x" * (EXCERPT_CHARS + 30)) == "x" * (EXCERPT_CHARS - 1) + "…"
    assert excerpt(["AC", "WA", None]) == "AC, WA, null"
    assert excerpt("a | b * c_d `e` [f]") == "a &#124; b &#42; c&#95;d &#96;e&#96; &#91;f&#93;"
    turn = [{"role": "assistant", "content": "<think>\n" + "why " * 40 + "</think>\n\\boxed{B}"}]
    cell = excerpt(turn)  # a response: its start and its end, where the answer is
    assert cell.startswith("&#91;assistant&#93; &lt;think&gt; why") and cell.endswith(
        "&#92;boxed{B}"
    )


def test_pass_rate_bins_centre_on_tenths() -> None:
    from pipeline.publish.card_facts import rate_bin

    # a band's limit (0.5; 0.7 and 0.9) is a bin's centre: no bar straddles it
    assert [rate_bin(r) for r in (0.0, 0.04, 0.05, 0.25, 0.3, 0.5, 0.54, 0.7, 0.9, 1.0)] == [
        0, 0, 1, 3, 3, 5, 5, 7, 9, 10,
    ]  # fmt: skip
