"""What a build shows of a finished publish (`PUBLISH.shows`): the published candidates
counted per config / language / model / verdict (a table in the Prefect UI), each published
split's rows and content hash (fingerprint entries: where two builds part), and its part of
the build's summary (where the dataset is, rows per split, the invariant checks, the
candidates by model and verdict)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.common.fingerprint import table_fingerprint
from pipeline.common.hub_folder import split_files
from pipeline.common.stage import Finished, Shown
from pipeline.publish.card import policy_note, verdict_mix_table
from pipeline.publish.layout import BuildManifest
from schemas.dataset_configs import CONFIG_BY_NAME


def _main_split_files(hub_dir: Path, name: str) -> list[Path]:
    """A config's shards of its `train` split, or of an evaluation set's `full` split
    (its `test` split is a sample of it: counted once)."""
    split = "train" if CONFIG_BY_NAME[name].side == "train" else "full"
    return split_files(hub_dir, name, split)


def dataset_counts(hub_dir: Path) -> list[dict[str, Any]]:
    """Candidates per config (split) / language / model / verdict in the published folder
    (evaluation configs: their `full` split)."""
    rows: list[dict[str, Any]] = []
    for name, cfg in CONFIG_BY_NAME.items():
        files = _main_split_files(hub_dir, name)
        if not files:
            continue
        if cfg.kind == "questions":
            n = sum(pl.read_parquet(f, columns=["problem_id"]).height for f in files)
            rows.append(
                {"split": name, "language": "-", "model": "-", "tier": "-", "verdict": "-",
                 "count": n}
            )  # fmt: skip
            continue
        cols = ["candidate_languages", "candidate_generators", "verdicts", "weak_strong"]
        df = pl.concat([pl.read_parquet(f, columns=cols) for f in files])
        exploded = df.explode(["candidate_languages", "candidate_generators", "verdicts"])
        grouped = exploded.group_by(
            ["candidate_languages", "candidate_generators", "weak_strong", "verdicts"]
        ).len()
        for r in grouped.sort(
            ["candidate_languages", "candidate_generators", "verdicts"]
        ).iter_rows(named=True):
            rows.append(
                {
                    "split": name,
                    "language": r["candidate_languages"],
                    "model": r["candidate_generators"],
                    "tier": r["weak_strong"],
                    "verdict": r["verdicts"],
                    "count": r["len"],
                }
            )
    return rows


def published_tables(hub_dir: Path) -> dict[str, Any]:
    """Each published config of the Hub folder as one Arrow table (configs without shards left out)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = {}
    for name in CONFIG_BY_NAME:
        files = _main_split_files(hub_dir, name)
        if files:
            out[name] = pa.concat_tables([pq.read_table(f) for f in files])
    return out


def config_fingerprints(hub_dir: Path) -> dict[str, dict[str, Any]]:
    """Rows and content hash of each published split (its shards in order, as one table):
    `<config>` for its whole table (`train`, or an evaluation set's `full`), `<config>/test`
    for an evaluation set's `test` split."""
    out = {}
    for name, cfg in CONFIG_BY_NAME.items():
        for split in cfg.splits:
            files = split_files(hub_dir, name, split)
            if not files:
                continue
            parts = [table_fingerprint(f) for f in files]
            digest = parts[0]["hash"]  # one shard: its own fingerprint
            if len(parts) > 1:
                joined = "".join(p["hash"] for p in parts)
                digest = hashlib.sha256(joined.encode()).hexdigest()[:12]
            key = f"{name}/{split}" if split == "test" else name
            out[key] = {"rows": sum(p["rows"] for p in parts), "hash": digest}
    return out


def summary_md(stats: dict[str, Any], run_config: dict[str, Any]) -> str:
    """Publish's part of the build summary: where the dataset is, its rows and shards per
    config, the invariant checks, the candidates by model and verdict."""
    hub = Path(stats["hub_dir"]).resolve()
    lines = [f"- dataset folder (laid out as pushed): `{hub}`", ""]
    lines += ["| config | rows per split | shards |", "| --- | --- | ---: |"]
    for name, n in stats["rows"].items():
        per_split = stats.get("split_rows", {}).get(name, {})
        rows = " / ".join(f"{s} {k}" for s, k in per_split.items()) or str(n)
        lines.append(f"| {name} | {rows} | {stats['shards'].get(name, '-')} |")
    lines += ["", "## Invariant checks", "", "| check | invariant | rows | result |"]
    lines.append("| --- | --- | ---: | --- |")
    for c in stats["checks"]:
        result = "pass" if c["passed"] else "FAIL"
        lines.append(f"| {c['name']} | {c['invariant']} | {c['rows']} | {result} |")
    lines += ["", "## Candidates by model and verdict", ""]
    note = policy_note(run_config)
    lines += [note] if note else []
    lines.append(verdict_mix_table(published_tables(hub)))
    return "\n".join(lines)


def publish_shown(done: Finished) -> Shown:
    hub = Path(done.outputs["hub"])
    manifest = done.inputs["manifest"]
    assert isinstance(manifest, Path), "the manifest input is one file"
    run_config = BuildManifest.read(manifest.parent).run_config
    rows = done.stats["rows"]
    prints = tuple(
        {"stage": "published", "output": name, **fp}
        for name, fp in config_fingerprints(hub).items()
    )
    counts = ("Candidates per config (split) / language / model / verdict", dataset_counts(hub))
    return Shown(
        lines=(f"the dataset: {hub.resolve()} ({', '.join(f'{k} {v}' for k, v in rows.items())})",),
        tables={"dataset-counts": counts},
        summary=summary_md(done.stats, run_config),
        prints=prints,
    )
