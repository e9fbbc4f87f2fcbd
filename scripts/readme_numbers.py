"""Keep the README's demo numbers equal to a demo build's.

    readme_numbers.py record [BUILD]   measure BUILD (a run's out_dir, default out/demo), write
                                       docs/demo-build.json and README.md's demo block from it
    readme_numbers.py check [BUILD]    README.md's block is docs/demo-build.json rendered; with
                                       BUILD, the record also equals what BUILD published

The numbers are measured from what the build wrote, never typed: rows per config and split
and per list size from the published folder (`<BUILD>/hub`, read through the schema-checked
reader every consumer uses), the DPO rows per `chosen_source` from the same rows, and Adv's
bias edits from the edits stage's `stats.json` (`<BUILD>/work/adv/edits`). The README holds
them between two markers; tests/test_readme_numbers.py fails when that block is not the
record rendered, so the README cannot drift from the record, and `check out/demo` after a
`make demo` says whether the record is still that build's.
"""

from __future__ import annotations

import datetime
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, NoReturn

import pyarrow.parquet as pq
import typer

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as `python scripts/readme_numbers.py` from anywhere
    sys.path.insert(0, str(REPO))

from pipeline.common.hub_folder import read_config
from pipeline.publish.card_facts import measure, same_rows
from schemas.dataset_configs import CONFIGS

README = REPO / "README.md"
RECORD = REPO / "docs" / "demo-build.json"
BEGIN = "<!-- demo-numbers: written by scripts/readme_numbers.py from docs/demo-build.json -->"
END = "<!-- /demo-numbers -->"
SIZES = (2, 3, 4, 5)
ROUTES = ("sampled", "regenerated", "gold_spliced")
# Keys of the record that describe the measurement, not the build: never compared.
ABOUT = frozenset({"measured_on", "judge_tests_stopped_by_wall_clock"})

app = typer.Typer(add_completion=False, help=__doc__.split("\n\n")[0])


def _fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


# ------------------------------------------------------------------------------ measure


def measure_build(build: Path) -> dict[str, Any]:
    """The record of one build: what its published folder and stats files hold."""
    hub, work = build / "hub", build / "work"
    for path in (hub, work / "build.json"):
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: is {build} a finished build's out_dir?")
    splits: list[dict[str, Any]] = []
    routes: dict[str, dict[str, int]] = {}
    for cfg in CONFIGS:
        tables = {s: read_config(hub, cfg.name, split=s) for s in cfg.splits}
        if cfg.kind == "dpo":
            counts = Counter(tables["train"].column("chosen_source").to_pylist())
            routes[cfg.name] = {r: counts.get(r, 0) for r in ROUTES}
        if len(tables) == 2 and same_rows(tables["test"], tables["full"]):
            tables = {"test = full": tables["test"]}
        for split, table in tables.items():
            facts = measure(cfg.name, split.split(" ")[0], table)
            row: dict[str, Any] = {
                "config": cfg.name,
                "split": split,
                "rows": facts.rows,
                "problems": facts.problems,
            }
            if facts.kind != "questions":
                row["sizes"] = {str(n): facts.sizes.get(n, 0) for n in SIZES}
            splits.append(row)
    edits = json.loads((work / "adv" / "edits" / "stats.json").read_text())
    manifest = json.loads((work / "build.json").read_text())
    found = {
        "build_id": manifest["build_id"],
        "measured_on": datetime.datetime.now(datetime.UTC).date().isoformat(),
        "problems": pq.ParquetFile(work / "problems.parquet").metadata.num_rows,
        "splits": splits,
        "policy_verdicts": _policy_verdicts(work / "judged.parquet"),
        "adv_edits": {
            "bias_types": len(edits["edits_planned_by_bias"]),
            "planned": edits["edits_planned"],
            "carried_unchanged": edits["edits_carried_unchanged"],
            "programs_rejudged": edits["distinct_programs"],
        },
        "dpo_chosen_source": routes,
        # Tests a busy machine stopped at the wall-clock cap before their CPU limit: TLEs a
        # quiet machine would not give, so the rows may differ from a quiet build's.
        "judge_tests_stopped_by_wall_clock": _wall_clock_stops(work / "fingerprints.json"),
    }
    report = build / "eval" / "report.json"  # the run config's `evaluate:` (default out_dir)
    if report.is_file():
        from pipeline.evaluate.report import headline

        done = json.loads(report.read_text())
        found["evaluation"] = {
            "split": done["config"]["split"],
            "headline": headline(done).splitlines(),
        }
    return found


def _wall_clock_stops(fingerprints: Path) -> int | None:
    """The judge stage's count of tests stopped by the wall clock (None: not recorded)."""
    if not fingerprints.is_file():
        return None
    for entry in json.loads(fingerprints.read_text()):
        if (entry.get("stage"), entry.get("output")) == ("judge", "judged"):
            return entry.get("tests_stopped_by_wall_clock")
    return None


def _policy_verdicts(judged: Path) -> dict[str, dict[str, int]]:
    """Judged policy samples per model, by verdict (most frequent first)."""
    table = pq.read_table(judged, columns=["origin", "generator", "verdict"]).to_pylist()
    by: dict[str, Counter[str]] = {}
    for r in table:
        if r["origin"] == "policy":
            by.setdefault(r["generator"], Counter())[r["verdict"]] += 1
    return {
        g: dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))) for g, c in sorted(by.items())
    }


# ------------------------------------------------------------------------------- render


def render(record: dict[str, Any]) -> str:
    """The README's block (between the markers, markers excluded) for a record."""
    by = {(s["config"], s["split"]): s for s in record["splits"]}
    lines = [
        (
            f"On the {record['problems']} bundled problems the demo (build "
            f"`{record['build_id']}`, measured {record['measured_on']}) publishes these rows:"
        ),
        "",
        "| config | split | rows | problems | " + " | ".join(f"{n} cand." for n in SIZES) + " |",
        "| --- | --- | ---: | ---: |" + " ---: |" * len(SIZES),
    ]
    for s in record["splits"]:
        sizes = s.get("sizes")
        cells = " | ".join(str(sizes[str(n)]) if sizes else "-" for n in SIZES)
        lines.append(f"| {s['config']} | {s['split']} | {s['rows']} | {s['problems']} | {cells} |")
    edits = record["adv_edits"]
    heldout = by.get(("heldout", "test"))
    adv = by.get(("adv", "test = full")) or by.get(("adv", "test"))
    source = ""
    if heldout and adv and adv["rows"] == edits["bias_types"] * heldout["rows"]:
        source = (
            f" Adv is Heldout's {heldout['rows']} `test` rows once per bias type "
            f"({edits['bias_types']} x {heldout['rows']})."
        )
    routes = record["dpo_chosen_source"]
    route_text = "; ".join(
        f"{name} {', '.join(f'{counts[r]} {r}' for r in ROUTES)}" for name, counts in routes.items()
    )
    mixes = "; ".join(
        f"{g} {sum(v.values())} (" + ", ".join(f"{k} {n}" for k, n in v.items()) + ")"
        for g, v in record["policy_verdicts"].items()
    )
    lines += ["", f"Policy samples judged, by verdict: {mixes}."]
    lines += [
        "",
        f"{source.lstrip()} Of its {edits['planned']} bias edits, {edits['carried_unchanged']} "
        f"are proven unchanged and keep their verdict, and {edits['programs_rejudged']} distinct "
        f"programs are judged again. DPO rows by where `chosen` came from: {route_text}.".lstrip(),
    ]
    if "evaluation" in record:
        lines += [
            "",
            (
                "The tiny random verifier's evaluation on each config's "
                f"`{record['evaluation']['split']}` split (in brackets: a random verifier's "
                "expected value):"
            ),
            "",
            "```",
            *record["evaluation"]["headline"],
            "```",
        ]
    return "\n".join(lines)


def readme_block(text: str) -> str:
    """The block between the markers of a README's text."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"README has no block between {BEGIN!r} and {END!r}")
    return text[start + len(BEGIN) : end].strip("\n")


def with_block(text: str, block: str) -> str:
    readme_block(text)  # the markers are there
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return f"{text[:start]}\n{block}\n{text[end:]}"


# -------------------------------------------------------------------------------- check


def differences(want: Any, have: Any, where: str = "") -> list[str]:
    """Where two records differ, one line each (`heldout/test rows: 39 != 40`)."""
    if isinstance(want, dict) and isinstance(have, dict):
        out = []
        for key in sorted(set(want) | set(have), key=str):
            if key in ABOUT:
                continue
            out += differences(want.get(key), have.get(key), f"{where}.{key}".lstrip("."))
        return out
    if (
        isinstance(want, list)
        and isinstance(have, list)
        and all(isinstance(x, dict) and "config" in x for x in want + have)
    ):
        keyed = lambda rows: {f"{r['config']}/{r['split']}": r for r in rows}
        return differences(keyed(want), keyed(have), where)
    return [] if want == have else [f"{where}: {want!r} != {have!r}"]


def check_readme(readme_text: str, record: dict[str, Any]) -> list[str]:
    """Lines that differ between the README's block and the record rendered (none: equal)."""
    try:
        have = readme_block(readme_text).splitlines()
    except ValueError as e:
        return [str(e)]
    want = render(record).splitlines()
    return [
        f"README line {i + 1} of the block: {h!r}, the record gives {w!r}"
        for i, (w, h) in enumerate(zip(want, have, strict=False))
        if w != h
    ] + (
        [f"README block has {len(have)} lines, the record {len(want)}"]
        if len(have) != len(want)
        else []
    )


# ------------------------------------------------------------------------------ commands


@app.command()
def record(
    build: Annotated[Path, typer.Argument(help="a finished build's out_dir")] = Path("out/demo"),
    readme: Annotated[Path, typer.Option(help="the README to rewrite")] = README,
    out: Annotated[Path, typer.Option(help="the record to write")] = RECORD,
) -> None:
    """Measure BUILD; write the record and the README's block from it."""
    try:
        found = measure_build(build)
    except FileNotFoundError as e:
        _fail(str(e), 2)
    old = json.loads(out.read_text()) if out.is_file() else {}
    out.write_text(json.dumps(found, indent=1) + "\n")
    readme.write_text(with_block(readme.read_text(), render(found)))
    changed = differences(old, found) if old else ["(no record before)"]
    typer.echo(f"wrote {out} and {readme}'s demo block from {build} ({found['build_id']})")
    for line in changed:
        typer.echo(f"  changed {line}")
    if found["judge_tests_stopped_by_wall_clock"]:
        typer.echo(
            f"warning: {found['judge_tests_stopped_by_wall_clock']} test(s) of this build were "
            "stopped by the wall clock (a busy machine): its verdicts may differ from a quiet "
            "build's; prefer recording a build made on a quiet machine",
            err=True,
        )


@app.command()
def check(
    build: Annotated[
        Path | None, typer.Argument(help="a finished build's out_dir to compare too")
    ] = None,
    readme: Annotated[Path, typer.Option(help="the README to check")] = README,
    recorded: Annotated[Path, typer.Option("--record", help="the record")] = RECORD,
) -> None:
    """Exit 0 iff README's block is the record rendered (and the record is BUILD's)."""
    saved = json.loads(recorded.read_text())
    problems = check_readme(readme.read_text(), saved)
    if build is not None:
        try:
            problems += [
                f"record vs {build}: {d}" for d in differences(saved, measure_build(build))
            ]
        except FileNotFoundError as e:
            _fail(str(e), 2)
    if problems:
        for line in problems:
            typer.echo(line, err=True)
        fix = f"python scripts/readme_numbers.py record {build or 'out/demo'}"
        _fail(f"the README's demo numbers are not the build's: run `{fix}`")
    typer.echo(
        f"{readme}'s demo numbers are {recorded}'s" + (f", which are {build}'s" if build else "")
    )


if __name__ == "__main__":
    app()
