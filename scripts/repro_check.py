"""Prove that two revisions publish the same dataset, byte for byte (issue 24).

    repro_check.py build --rev REV --config small|demo --into DIR
    repro_check.py compare A B [--work]

`build` exports REV (`git archive | tar -x`) into DIR/src and runs the train flow there on a
fresh ephemeral Prefect server, with every path in the run config relative to DIR/src: two
builds then write the same strings into the card wherever they ran. The shared
ALETHEIA_CACHE_DIR gives them the same sandbox image and verdict cache (sound: a verdict is
keyed by source, tests, limits and image); the policy fits, sampling and DPO responses run
fresh in the export's own .cache/. It copies the published folder to DIR/hub, every work
Parquet to DIR/work, and writes DIR/repro.json (rev, commit, config, build id, seconds).

`compare` exits 0 iff both builds publish the same files with the same bytes, and prints
one line per Hub file (`=` or `≠`, rows, sha) with, for a difference, where it starts.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn

import pyarrow as pa
import pyarrow.parquet as pq
import typer
import yaml

from pipeline.common.fingerprint import MEASURED_COLUMNS, table_fingerprint

SHARED_CACHE = Path("/work/main/.cache")
DIFF_LINES = 40  # differing README lines shown
BUILD_ID = "build_id"  # a column on every published row
VALUE_CHARS = 200  # a differing cell is shown up to this many characters

# The small flow config (tests/flows/flows_helpers.small_config of the exported revision),
# every path relative to the export root so that both builds embed the same strings.
SMALL_OUT = "out/repro-small"
SMALL_PROBLEMS_DIR = "out/repro-small-problems"
SMALL_MODELS = ".cache/repro-small"  # tiny model here, the policies at .cache/repro-small-*
SMALL_CONFIG_FILE = "repro-small.yaml"
WRITE_SMALL_CONFIG = f"""
import shutil, sys, yaml
from pathlib import Path
from tests.flows.flows_helpers import REPO, SMALL_PROBLEMS, small_config
problems = Path({SMALL_PROBLEMS_DIR!r})
for name in SMALL_PROBLEMS:
    shutil.copytree(REPO / "data" / "bundled" / name, problems / name)
cfg = small_config(Path({SMALL_OUT!r}), problems, Path({SMALL_MODELS!r}))
Path({SMALL_CONFIG_FILE!r}).write_text(yaml.safe_dump(cfg, sort_keys=True))
"""
RUN_FLOW = """
import sys
import flows.build
from pathlib import Path
here = Path.cwd().resolve()
if not Path(flows.build.__file__).resolve().is_relative_to(here):
    sys.exit(f"flows.build came from {flows.build.__file__}, not the export {here}")
from flows.build import build_aletheia_train as f
f(sys.argv[1])
"""

# Work tables in data-flow order: the first whose fingerprint differs is where builds part.
STAGE_ORDER = (
    ("ingest", ("problems.parquet", "problems.quarantine.parquet")),
    ("splits", ("splits/*.parquet",)),
    ("sample", ("sample/shards/*.parquet", "sample/*/shards/**/*.parquet",
                "sample/*/candidates.parquet", "candidates.parquet")),
    ("judge", ("judge/shards/*.parquet", "judge/judged-*.parquet", "judged.parquet")),
    ("instances", ("instances/*.parquet",)),
    ("mixed", ("mixed/edits/*.parquet", "mixed/judge/shards/*.parquet",
               "mixed/judge/judged-*.parquet", "mixed/judged-edits.parquet", "mixed/*.parquet")),
    ("dpo", ("dpo/shards/*.parquet", "dpo/responses/**/*.parquet", "dpo/*.parquet")),
    ("mixed_dpo", ("mixed_dpo/shards/*.parquet", "mixed_dpo/responses/**/*.parquet",
                   "mixed_dpo/*.parquet")),
    ("adv", ("adv/edits/*.parquet", "adv/judge/shards/*.parquet", "adv/judge/judged-*.parquet",
             "adv/judged-edits.parquet", "adv/*.parquet")),
)  # fmt: skip

app = typer.Typer(add_completion=False, help=__doc__.split("\n\n")[0])


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def _fail(message: str, code: int = 2) -> NoReturn:
    """One line on stderr, then exit (2: bad arguments, 1: the build failed)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def _run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(cmd, check=True, **kw)


# ---------------------------------------------------------------- build


def _flow_env(prefect_home: Path, cache: Path, src: Path) -> dict[str, str]:
    """The caller's environment, pointed at the export and at a fresh ephemeral Prefect."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(
        PYTHONPATH=str(src),
        PYTHONUNBUFFERED="1",
        PREFECT_HOME=str(prefect_home),
        PREFECT_SERVER_ALLOW_EPHEMERAL_MODE="true",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="300",  # a loaded 2-core box
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        DO_NOT_TRACK="1",
        ALETHEIA_CACHE_DIR=str(cache),
    )
    return env


def _copy_outputs(out: Path, into: Path) -> None:
    shutil.copytree(out / "hub", into / "hub")
    for p in sorted((out / "work").rglob("*.parquet")):
        dest = into / "work" / p.relative_to(out / "work")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, dest)
    shutil.copy2(out / "work" / "build.json", into / "work" / "build.json")


@app.command()
def build(
    rev: Annotated[str, typer.Option(help="a git revision of this repository")],
    into: Annotated[Path, typer.Option(help="an empty or new folder for the build")],
    config: Annotated[str, typer.Option(help="small (the flow tests' config) or demo")] = "small",
    repo: Annotated[Path, typer.Option(help="the git checkout REV is read from")] = Path("."),
    cache: Annotated[
        Path | None,
        typer.Option(help=f"ALETHEIA_CACHE_DIR (sandbox image, verdicts); else {SHARED_CACHE}"),
    ] = None,
) -> None:
    """Export REV into INTO/src, build it there, keep its hub and work tables in INTO."""
    if config not in ("small", "demo"):
        _fail(f"--config is small or demo, not {config!r}")
    into = into.resolve()
    if into.exists() and any(into.iterdir()):
        _fail(f"{into} is not empty: give a new folder")
    found = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        _fail(f"{rev!r} is not a commit of {repo.resolve()}; give a sha or branch")
    commit = found.stdout.strip()
    src = into / "src"
    src.mkdir(parents=True)
    archive = subprocess.Popen(["git", "-C", str(repo), "archive", commit], stdout=subprocess.PIPE)
    _run(["tar", "-x", "-C", str(src)], stdin=archive.stdout)
    if archive.wait() != 0:
        _fail(f"git archive {commit} failed", 1)

    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="repro-prefect-") as prefect_home:
        shared = cache or Path(os.environ.get("ALETHEIA_CACHE_DIR") or SHARED_CACHE)
        env = _flow_env(Path(prefect_home), shared.resolve(), src)
        if config == "small":
            _run([py, "-c", WRITE_SMALL_CONFIG], cwd=src, env=env)
            cfg_file, out = SMALL_CONFIG_FILE, src / SMALL_OUT
        else:
            cfg_file = "configs/demo.yaml"
            out = src / yaml.safe_load((src / cfg_file).read_text())["out_dir"]
        typer.echo(f"building {rev} ({commit[:12]}) with {cfg_file} in {src}; log {into}/build.log")
        t0 = time.monotonic()
        with open(into / "build.log", "wb") as log:
            rc = subprocess.run([py, "-c", RUN_FLOW, cfg_file], check=False, cwd=src, env=env, stdout=log,
                                stderr=subprocess.STDOUT).returncode  # fmt: skip
        seconds = round(time.monotonic() - t0, 1)
    if rc != 0:
        tail = (into / "build.log").read_text(errors="replace").splitlines()[-30:]
        typer.echo("\n".join(tail), err=True)
        _fail(f"the build failed (exit {rc}) after {seconds} s; see {into}/build.log", 1)
    _copy_outputs(out, into)
    build_id = json.loads((out / "work" / "build.json").read_text())["build_id"]
    meta = {"rev": rev, "commit": commit, "config": config, "config_file": cfg_file,
            "build_id": build_id, "seconds": seconds}  # fmt: skip
    (into / "repro.json").write_text(json.dumps(meta, indent=1) + "\n")
    typer.echo(f"built {build_id} in {seconds} s -> {into}/hub")


# ---------------------------------------------------------------- compare


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _rows(path: Path) -> int:
    return pq.ParquetFile(path).metadata.num_rows


def _show(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS] + "…"


def _same(a: Any, b: Any) -> bool:
    """Equal values; NaN equals NaN (the bytes would be equal too)."""
    return a == b or json.dumps(a, default=str) == json.dumps(b, default=str)


def _schema_diff(a: pa.Schema, b: pa.Schema) -> list[str]:
    lines = []
    fa, fb = {f.name: f for f in a}, {f.name: f for f in b}
    for name in fa.keys() - fb.keys():
        lines.append(f"column {name} only in A ({fa[name].type})")
    for name in fb.keys() - fa.keys():
        lines.append(f"column {name} only in B ({fb[name].type})")
    for name in fa.keys() & fb.keys():
        if not fa[name].equals(fb[name]):
            lines.append(f"column {name}: {fa[name]} vs {fb[name]}")
    if not lines and a.names != b.names:
        lines.append(f"column order: {a.names} vs {b.names}")
    return sorted(lines)


def _first_row_diff(a: Path, b: Path, where: str, skip: frozenset[str] = frozenset()) -> str | None:
    """Where the rows of two Parquet files with one schema first differ (the columns in
    `skip` left out); None if nowhere."""
    fa, fb = pq.ParquetFile(a), pq.ParquetFile(b)
    columns = [c for c in fa.schema_arrow.names if c not in skip]
    rows_a = (r for batch in fa.iter_batches(batch_size=1024) for r in batch.to_pylist())
    rows_b = (r for batch in fb.iter_batches(batch_size=1024) for r in batch.to_pylist())
    for i, (ra, rb) in enumerate(zip(rows_a, rows_b, strict=False)):
        for col in columns:
            if not _same(ra.get(col), rb.get(col)):
                ids = f" instance_id {ra.get('instance_id')}" if "instance_id" in ra else ""
                return (
                    f"first differing row: {where} row {i}{ids}, column {col}:\n"
                    f"      A: {_show(ra.get(col))}\n      B: {_show(rb.get(col))}"
                )
    return None


def _parquet_detail(a: Path, b: Path, where: str) -> list[str]:
    schema_a, schema_b = pq.read_schema(a), pq.read_schema(b)
    out = [f"schema: {line}" for line in _schema_diff(schema_a, schema_b)]
    na, nb = _rows(a), _rows(b)
    if na != nb:
        out.append(f"rows: {na} vs {nb}")
    if out and not (na != nb and len(out) == 1):
        return out  # other columns: rows cannot be compared cell by cell
    first = _first_row_diff(a, b, where)
    if first:
        out.append(first)
        if f", column {BUILD_ID}:" in first:  # it is on every row: say what else differs
            other = _first_row_diff(a, b, where, frozenset({BUILD_ID}))
            out.append(f"{BUILD_ID} left out, {other}" if other else f"only {BUILD_ID} differs")
    elif na != nb:
        out.append(
            f"first differing row: {where} row {min(na, nb)}, only in {'A' if na > nb else 'B'}"
        )
    else:
        meta = "" if schema_a.equals(schema_b, check_metadata=True) else "; schema metadata differs"
        out.append(f"same rows, other bytes{meta}")
    return out


def _text_diff(a: Path, b: Path) -> list[str]:
    diff = difflib.unified_diff(
        a.read_text(errors="replace").splitlines(),
        b.read_text(errors="replace").splitlines(),
        "A/" + a.name, "B/" + b.name, lineterm="", n=1,
    )  # fmt: skip
    lines, changed = [], 0
    for line in diff:
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
            changed += 1
            if changed > DIFF_LINES:
                lines.append(f"(diff cut after {DIFF_LINES} differing lines)")
                break
        lines.append(line)
    return lines


def _where(rel: str) -> str:
    """config and split of a Hub Parquet path: `train/train-00000-of-00001.parquet`."""
    parts = rel.split("/")
    if len(parts) == 2 and parts[1].endswith(".parquet"):
        return f"config {parts[0]} split {parts[1].split('-')[0]}"
    return rel


def compare_hub(a: Path, b: Path) -> tuple[bool, list[str]]:
    """(same, report lines) for two published folders."""
    files_a, files_b = _files(a), _files(b)
    ok = files_a == files_b
    lines = [f"only in A: {f}" for f in files_a if f not in files_b]
    lines += [f"only in B: {f}" for f in files_b if f not in files_a]
    for rel in sorted(set(files_a) & set(files_b)):
        pa_, pb_ = a / rel, b / rel
        sha_a, sha_b = _sha(pa_), _sha(pb_)
        is_pq = rel.endswith(".parquet")
        rows = f"{_rows(pa_)} rows " if is_pq else ""
        if sha_a == sha_b:
            lines.append(f"= {rel} {rows}{sha_a}")
            continue
        ok = False
        rows = f"{_rows(pa_)}/{_rows(pb_)} rows " if is_pq else ""
        lines.append(f"≠ {rel} {rows}{sha_a} vs {sha_b}")
        if is_pq:
            lines += ["    " + d for d in _parquet_detail(pa_, pb_, _where(rel))]
        elif rel.endswith((".md", ".txt", ".yaml", ".json")):
            lines += ["    " + d for d in _text_diff(pa_, pb_)]
    return ok, lines


def _stage_tables(a: Path, b: Path) -> list[tuple[str, str]]:
    """(stage, table path) of every work Parquet of either build, in data-flow order;
    unknown ones last."""
    seen: set[str] = set()
    out = []
    for stage, patterns in STAGE_ORDER:
        for pattern in patterns:
            found = {p.relative_to(w).as_posix() for w in (a, b) for p in w.glob(pattern)}
            out += [(stage, rel) for rel in sorted(found - seen)]
            seen |= found
    rest = {r for w in (a, b) for r in _files(w) if r.endswith(".parquet")} - seen
    return out + [("other", rel) for rel in sorted(rest)]


@dataclass
class WorkReport:
    lines: list[str]
    first_parted: str | None


def compare_work(a: Path, b: Path) -> WorkReport:
    """Fingerprints (rows, hash of every row but the measured columns) of every work table."""
    lines, first = [], None
    for stage, rel in _stage_tables(a, b):
        fa = table_fingerprint(a / rel) if (a / rel).is_file() else None
        fb = table_fingerprint(b / rel) if (b / rel).is_file() else None
        same = fa == fb
        show = lambda f: "missing" if f is None else f"{f['rows']} rows {f['hash']}"
        lines.append(f"{'=' if same else '≠'} [{stage}] {rel} {show(fa)}"
                     + ("" if same else f" vs {show(fb)}"))  # fmt: skip
        if not same and first is None:
            first = f"{stage} ({rel})"
    return WorkReport(lines, first)


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        return {
            k: v for key, item in value.items() for k, v in _flat(item, f"{prefix}{key}.").items()
        }
    if isinstance(value, list):
        return {
            k: v for i, item in enumerate(value) for k, v in _flat(item, f"{prefix}{i}.").items()
        }
    return {prefix.rstrip("."): value}


def config_diff(a: Path, b: Path, limit: int = 10) -> list[str]:
    """The run configs' differing keys (work/build.json's `run_config`): a card that differs
    because the inputs differ (another small_config) reads otherwise than a code change."""
    fa, fb = (_flat(json.loads(p.read_text()).get("run_config", {})) for p in (a, b))
    keys = sorted(k for k in fa.keys() | fb.keys() if not _same(fa.get(k), fb.get(k)))
    lines = [f"{k}: {_show(fa.get(k))} vs {_show(fb.get(k))}" for k in keys[:limit]]
    return lines + ([f"(and {len(keys) - limit} more)"] if len(keys) > limit else [])


def _build_root(path: Path) -> tuple[Path, Path | None]:
    """(hub, work) of a build folder (hub/ and work/ inside) or of a published folder
    itself (`out/demo/hub`: its work folder is the sibling `work/` where there is one)."""
    if (path / "hub").is_dir():
        return path / "hub", path / "work"
    sibling = path.parent / "work"
    return path, sibling if path.name == "hub" and sibling.is_dir() else None


@app.command()
def compare(
    a: Annotated[Path, typer.Argument(help="a build folder (from `build`) or a hub folder")],
    b: Annotated[Path, typer.Argument(help="the other one")],
    work: Annotated[bool, typer.Option(help="also fingerprint every work table")] = False,
) -> None:
    """Exit 0 iff A and B publish the same files with the same bytes."""
    for p in (a, b):
        if not p.is_dir():
            _fail(f"{p} is not a folder")
    hub_a, work_a = _build_root(a)
    hub_b, work_b = _build_root(b)
    for p in (a, b):
        meta = p / "repro.json"
        if meta.is_file():
            m = json.loads(meta.read_text())
            typer.echo(f"{p}: {m['rev']} ({m['commit'][:12]}) {m['config']} {m['build_id']}")
    if (
        work_a
        and work_b
        and (work_a / "build.json").is_file()
        and (work_b / "build.json").is_file()
    ):
        differ = config_diff(work_a / "build.json", work_b / "build.json")
        typer.echo(
            "run configs differ (build.json; build_id and fit revisions are derived):"
            if differ
            else "run configs: same"
        )
        typer.echo("".join(f"    {line}\n" for line in differ), nl=False)
    ok, lines = compare_hub(hub_a, hub_b)
    typer.echo("\n".join(lines))
    if work:
        if work_a is None or work_b is None:
            _fail("--work needs two build folders (hub/ and work/ inside) or two <out>/hub folders")
        typer.echo(f"work tables (fingerprints leave out {', '.join(sorted(MEASURED_COLUMNS))}):")
        report = compare_work(work_a, work_b)
        typer.echo("\n".join(report.lines))
        typer.echo(
            f"the builds part first at: {report.first_parted}"
            if report.first_parted
            else "every work table has the same rows"
        )
    typer.echo("SAME: the published folders are byte-identical" if ok else "DIFFERENT")
    raise typer.Exit(0 if ok else 1)


if __name__ == "__main__":
    app()
