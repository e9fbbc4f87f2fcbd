"""The sample stage: problems.parquet -> candidates.parquet (+ sample_stats.json).

    run_stage(SAMPLE, config, {"problems": Path("problems.parquet")}, Path("sample/"))

`SAMPLE` is the stage as a value (pipeline/common/stage.py), run by the one runner
(pipeline/common/runner.py; the marker `_stage.json` inside the output folder). Its
`sharding` names the layout the sample flow uses today (problem shards in
`sample/shards/problems-IIII-of-NNNN.parquet`, parts in `sample/shard-IIII/`, merged into
`candidates.parquet`). `sample(...)` is the entry point of `aletheia sample` and the
tests, a wrapper over the runner (the flows run SAMPLE through flows/task.py).

Model sources generate through their backend; `reference` and `mutant` sources come
from the problems' own solutions. Resumable at the unit (problem, model, language,
sample index): finished results are appended as unit shard files (`shards/<source>-<fp>/`
inside the output folder) while generation runs, and a restart skips every unit found in
them. A unit that failed to generate (an `error:` finish reason) is not written, so the
next run retries it; the run then raises `Incomplete` (the outputs are written, the stage
is not marked finished). A unit dropped by a token filter is written as such, so it is
not retried.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.common import progress
from pipeline.common.config import RunnerSection
from pipeline.common.hashing import canonical_json, sha256_text
from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.runner import run_stage
from pipeline.common.stage import LeftUnfinished, ShardContext, Sharding, Stage, Stats
from pipeline.judge.summary import candidate_summary
from pipeline.sampling.backends.base import Backend, GenerationRequest, GenerationResult
from pipeline.sampling.checks import check_sample
from pipeline.sampling.config import ModelSource, MutantSource, ReferenceSource, SampleConfig
from pipeline.sampling.extraction import extract_code
from pipeline.sampling.mutants import mutant_candidates
from pipeline.sampling.prompts import chat_messages
from pipeline.sampling.references import reference_candidates
from pipeline.sampling.seeds import derive_seed
from schemas.candidate import CANDIDATE_FIELDS, CANDIDATE_SCHEMA, Candidate
from schemas.ids import candidate_id_for
from schemas.problem import PROBLEM_SCHEMA, Problem
from schemas.tables import table_to_models

log = logging.getLogger(__name__)

STAGE = "sample"
VERSION = "1"
STATS_FILE = "sample_stats.json"
CANDIDATES_FILE = "candidates.parquet"
# Shards: the candidate columns plus what happened to the unit.
SHARD_SCHEMA = pa.schema([*CANDIDATE_FIELDS, pa.field("unit_status", pa.string(), nullable=False)])
KEPT = "kept"


@dataclass
class Unit:
    """One (problem, language) prompt of a model source and the sample indexes it still needs."""

    problem: Problem
    language: str
    messages: list[dict[str, str]]
    prompt_sha: str
    seed: int
    sample_indexes: list[int]

    @property
    def request_id(self) -> str:
        return f"{self.problem.problem_id}|{self.language}|{self.sample_indexes[0]}"


# --------------------------------------------------------------------------- helpers
def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:60] or "model"


def source_fingerprint(source: ModelSource) -> str:
    """What decides a source's outputs (not throughput settings such as concurrency)."""
    body = source.model_dump(mode="json", exclude={"shard_requests", "backend"})
    body["backend_type"] = source.backend.type
    return sha256_text(canonical_json(body))[:12]


def load_problems(path: Path) -> list[Problem]:
    return sorted(
        table_to_models(read_parquet(path, PROBLEM_SCHEMA), Problem), key=lambda p: p.problem_id
    )


class _Tokens:
    """Token counts with the filter's named tokenizer (loaded once)."""

    def __init__(self, name: str) -> None:
        from transformers import AutoTokenizer

        self.tok = AutoTokenizer.from_pretrained(name)

    def text(self, text: str) -> int:
        return len(self.tok.encode(text, add_special_tokens=False))

    def chat(self, messages: list[dict[str, str]]) -> int:
        if self.tok.chat_template:
            text = self.tok.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
            return self.text(text)
        return self.text("\n".join(m["content"] for m in messages))


# --------------------------------------------------------------------------- model sources
class ModelSampler:
    """Generates one model source's candidates into its shard folder, resumably."""

    def __init__(self, source: ModelSource, shard_dir: Path, progress: bool) -> None:
        self.source = source
        self.dir = shard_dir
        self.progress = progress
        self.stats: dict[str, Any] = {
            "units_total": 0,
            "units_resumed": 0,
            "requests": 0,
            "generated": 0,
            "filtered_prompt": 0,
            "filtered_completion": 0,
            "generation_errors": 0,
            "skipped_function_mode_language": 0,
            "seconds": 0.0,
        }
        self.tokens = _Tokens(source.filters.tokenizer) if source.filters else None

    # -- resumability
    def done_units(self) -> set[tuple[str, str, int]]:
        done = set()
        for shard in sorted(self.dir.glob("shard-*.parquet")):
            t = read_parquet(shard, SHARD_SCHEMA).select(["problem_id", "language", "sample_index"])
            done.update(zip(*(t.column(c).to_pylist() for c in t.column_names)))
        return done

    def shard_rows(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for shard in sorted(self.dir.glob("shard-*.parquet")):
            rows.extend(read_parquet(shard, SHARD_SCHEMA).to_pylist())
        return rows

    def _write_shard(self, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        ids = sorted(f"{r['problem_id']}|{r['language']}|{r['sample_index']}" for r in rows)
        name = sha256_text(*ids)[:16]
        write_parquet(
            pa.Table.from_pylist(rows, schema=SHARD_SCHEMA),
            self.dir / f"shard-{name}.parquet",
            SHARD_SCHEMA,
        )

    # -- planning
    def units(self, problems: Iterable[Problem]) -> list[Unit]:
        s = self.source
        done = self.done_units()
        template = s.chat_template_text()
        out = []
        for p in problems:
            for lang in s.languages:
                if p.test_mode == "function" and lang != "python":
                    self.stats["skipped_function_mode_language"] += 1
                    continue
                self.stats["units_total"] += s.samples_per_problem
                missing = [
                    i for i in range(s.samples_per_problem) if (p.problem_id, lang, i) not in done
                ]
                self.stats["units_resumed"] += s.samples_per_problem - len(missing)
                if not missing:
                    continue
                messages = chat_messages(p, lang, system=s.system_prompt)
                shaped = {"messages": messages, "template": template}
                if s.chat_template_kwargs:  # only when set: older caches keep their keys
                    shaped["template_kwargs"] = s.chat_template_kwargs
                prompt_sha = sha256_text(canonical_json(shaped))[:16]
                seed = derive_seed(s.seed, p.problem_id, lang, prompt_sha)
                if missing[0] != 0:  # a partial unit (samples_per_problem was raised): new seeds
                    seed = derive_seed(seed, "from", missing[0])
                out.append(Unit(p, lang, messages, prompt_sha, seed, missing))
        return out

    def request(self, unit: Unit) -> GenerationRequest:
        s = self.source
        return GenerationRequest(
            request_id=unit.request_id,
            messages=unit.messages,
            n=len(unit.sample_indexes),
            temperature=s.temperature,
            top_p=s.top_p,
            max_tokens=s.max_tokens,
            seed=unit.seed,
            chat_template_kwargs=s.chat_template_kwargs,
        )

    # -- rows
    def _row(
        self, unit: Unit, index: int, result: GenerationResult | None, gen: Any, status: str
    ) -> dict:
        s = self.source
        text = gen.text if gen is not None else None
        code, extraction = "", "no_code"
        if text is not None:
            got = extract_code(text, unit.language)
            code, extraction = got.code, got.status
        if code:
            cid = candidate_id_for(unit.language, code)
        else:  # no program: an id from the completion, so rows stay distinct (never judged)
            cid = candidate_id_for(
                unit.language, f"\x00no-program\x00{s.name}\x00{index}\x00{text or ''}"
            )
        prompt_tokens = gen.prompt_tokens if gen is not None else None
        completion_tokens = gen.completion_tokens if gen is not None else None
        if self.tokens is not None and text is not None:  # fill counts the server did not give
            prompt_tokens = (
                prompt_tokens if prompt_tokens is not None else self.tokens.chat(unit.messages)
            )
            completion_tokens = (
                completion_tokens if completion_tokens is not None else self.tokens.text(text)
            )
        row = Candidate(
            candidate_id=cid,
            problem_id=unit.problem.problem_id,
            language=unit.language,
            code=code,
            completion=text,
            extraction=extraction,
            origin="policy",
            generator=s.name,
            generator_revision=(result.model_revision if result else None) or s.revision,
            tier=s.tier,
            backend=result.backend if result else s.backend.type,
            temperature=s.temperature,
            top_p=s.top_p,
            max_tokens=s.max_tokens,
            seed=unit.seed,
            sample_index=index,
            prompt_sha=unit.prompt_sha,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            finish_reason=gen.finish_reason if gen is not None else None,
        ).model_dump(mode="python")
        row["unit_status"] = status
        return row

    def _result_rows(self, unit: Unit, result: GenerationResult) -> list[dict[str, Any]]:
        rows = []
        f = self.source.filters
        for index, gen in zip(unit.sample_indexes, result.generations):
            if gen.finish_reason.startswith("error"):
                self.stats["generation_errors"] += 1
                log.warning(
                    "%s %s sample %d: %s",
                    self.source.name,
                    unit.request_id,
                    index,
                    gen.finish_reason,
                )
                continue  # not written: retried by the next run
            status = KEPT
            too_long = (
                f
                and f.max_completion_tokens
                and self.tokens is not None
                and (self.tokens.text(gen.text) > f.max_completion_tokens)
            )
            if too_long:
                status = "filtered_completion"
                self.stats["filtered_completion"] += 1
            self.stats["generated"] += 1
            rows.append(self._row(unit, index, result, gen, status))
        return rows

    # -- the run
    def run(self, problems: list[Problem], backend_factory: Any) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        units = self.units(problems)
        f = self.source.filters
        if f and f.max_prompt_tokens and self.tokens is not None:
            kept, dropped_rows = [], []
            for u in units:
                if self.tokens.chat(u.messages) > f.max_prompt_tokens:
                    self.stats["filtered_prompt"] += len(u.sample_indexes)
                    dropped_rows += [
                        self._row(u, i, None, None, "filtered_prompt") for i in u.sample_indexes
                    ]
                else:
                    kept.append(u)
            self._write_shard(dropped_rows)
            units = kept
        if not units:
            return
        by_id = {u.request_id: u for u in units}
        requests = [self.request(u) for u in units]
        self.stats["requests"] += len(requests)
        t0 = time.perf_counter()
        backend: Backend = backend_factory(self.source)
        buffer: list[dict[str, Any]] = []
        pending = 0  # results in the buffer
        tracker = progress.track("requests", len(requests))
        try:
            for result in backend.generate(requests, progress=self.progress):
                buffer += self._result_rows(by_id[result.request_id], result)
                tracker.advance()
                pending += 1
                if pending >= self.source.shard_requests:
                    self._write_shard(buffer)
                    buffer, pending = [], 0
        finally:
            self._write_shard(buffer)  # whatever finished, even when generation failed midway
            backend.close()
            self.stats["seconds"] += time.perf_counter() - t0


# --------------------------------------------------------------------------- the stage
def _default_factory(source: ModelSource) -> Backend:
    from pipeline.sampling.backends.factory import make_backend

    return make_backend(source)


class Incomplete(LeftUnfinished):
    """Some units failed to generate. The candidates and sample_stats.json are written (the
    finished units are kept in the unit shards), but the stage must not be marked finished:
    the next run retries the failed units. `stats` is what the run returns."""

    def __init__(self, stats: Stats) -> None:
        errors = sum(s.get("generation_errors", 0) for s in stats["sources"].values())
        super().__init__(
            f"sample: {errors} unit(s) failed to generate; run again to retry them "
            "(finished work is kept)",
            stats,
        )


def sample_outputs(config: SampleConfig, out: Path) -> dict[str, Path]:
    """A run's folder -> its candidates and stats; the merged table of a sharded run (a
    file name, `candidates.parquet`) -> itself."""
    out = Path(out)
    if out.suffix:
        return {"candidates": out}
    return {"candidates": out / CANDIDATES_FILE, "stats": out / STATS_FILE}


def _problem_files(value: Path | list[Path]) -> list[Path]:
    return [Path(value)] if isinstance(value, (str, Path)) else [Path(p) for p in value]


def run_sample(ctx: ShardContext[SampleConfig], *, backend_factory: Any = None) -> Stats:
    """Sample every source over the problems into `ctx.out`; raises Incomplete (after writing
    the outputs) when a unit failed to generate."""
    config, out_dir = ctx.config, Path(ctx.out)
    if out_dir.suffix:
        raise ValueError(f"sample writes a folder: {out_dir} names a file (use its folder)")
    factory = backend_factory or _default_factory
    if backend_factory is None:  # the servers it samples answer, before any problem is read
        from pipeline.sampling.checks import require_served_sources

        require_served_sources(
            (f"sample.{s.name}", s.backend, s.model)
            for s in config.sources
            if isinstance(s, ModelSource)
        )
    probs = sorted(
        (p for f in _problem_files(ctx.inputs["problems"]) for p in load_problems(f)),
        key=lambda p: p.problem_id,
    )
    rows: list[dict[str, Any]] = []
    source_stats: dict[str, Any] = {}
    incomplete = False
    for source in config.sources:
        if isinstance(source, ModelSource):
            sampler = ModelSampler(
                source,
                out_dir / "shards" / f"{_slug(source.name)}-{source_fingerprint(source)}",
                config.progress,
            )
            sampler.run(probs, factory)
            shard = sampler.shard_rows()
            rows += [r for r in shard if r.pop("unit_status") == KEPT]
            source_stats[source.name] = sampler.stats
            incomplete |= sampler.stats["generation_errors"] > 0
        elif isinstance(source, ReferenceSource):
            refs = reference_candidates(probs, tier=source.tier, languages=source.languages)
            rows += [c.model_dump(mode="python") for c in refs]
            source_stats[f"reference:{source.tier}"] = {"candidates": len(refs)}
        elif isinstance(source, MutantSource):
            parents = [
                r
                for r in reference_candidates(probs, tier=source.tier, languages=source.languages)
                if r.reference_correct
            ]
            muts = mutant_candidates(
                parents,
                operators=source.operators,
                per_candidate=source.per_candidate,
                seed=source.seed,
                tier=source.tier,
            )
            rows += [c.model_dump(mode="python") for c in muts]
            source_stats[f"mutant:{source.tier}"] = {
                "parents": len(parents),
                "candidates": len(muts),
            }

    rows, folded = _fold_duplicates(rows)
    rows.sort(
        key=lambda r: (
            r["origin"],
            r["generator"],
            r["tier"],
            r["problem_id"],
            r["language"],
            r["sample_index"],
            r["candidate_id"],
        )
    )
    table = (
        pa.Table.from_pylist(rows, schema=CANDIDATE_SCHEMA)
        if rows
        else CANDIDATE_SCHEMA.empty_table()
    )
    write_parquet(table, out_dir / CANDIDATES_FILE, CANDIDATE_SCHEMA)
    stats = {
        "candidates": len(rows),
        "duplicates_folded": folded,
        "complete": not incomplete,
        "sources": source_stats,
        "by_generator_language": candidate_summary(rows),
    }
    (out_dir / STATS_FILE).write_text(json.dumps(stats, indent=2, default=str))
    if incomplete:
        raise Incomplete(stats)
    return stats


def _shard_folder(out: Path) -> Path:
    return Path(out).parent / "sample"  # work/candidates.parquet -> work/sample


def _part(i: int, n: int) -> str:
    return f"shard-{i:04d}"


def _shard_count(runner: Any) -> int:
    return runner.sample_shards


def _plan_line(config: SampleConfig, runner: RunnerSection) -> str:
    return (
        f"{len(config.sources)} candidate source(s), {runner.sample_shards} shard(s) on "
        f"{runner.kind}, at most {runner.model_parallel} at once"
    )


SAMPLE: Stage[SampleConfig] = Stage(
    name=STAGE,
    version=VERSION,
    config=SampleConfig,
    check=check_sample,
    inputs=("problems",),  # one problems table, or several (train + heldout), concatenated
    outputs=sample_outputs,
    run=run_sample,
    plan=_plan_line,
    sharding=Sharding(
        inputs=("problems",),
        schema=PROBLEM_SCHEMA,
        count=_shard_count,
        placement="sample",
        merge={"candidates": CANDIDATE_SCHEMA},
        stem="problems",
        folder=_shard_folder,
        part=_part,
    ),
    tags=("gpu",),
    resources=lambda cfg, inputs, opened, quiet: (
        SAMPLE,
        cfg.model_copy(update={"progress": False}) if quiet else cfg,  # log lines, not a bar
    ),
    models="pinned",
    reports=lambda cfg, out: progress.progress_file(out),
)


def sampling_with(backend_factory: Any) -> Stage[SampleConfig]:
    """SAMPLE opening its model backends through `backend_factory` (source -> Backend): the
    same name, version and key, so the same rows."""
    return replace(SAMPLE, run=partial(run_sample, backend_factory=backend_factory))


def sample(
    config: SampleConfig, problems: Path, out_dir: Path, *, backend_factory: Any = None
) -> dict[str, Any]:
    """The sample stage through the runner (the entry point of
    `aletheia sample` and the tests). Writes out_dir/candidates.parquet and out_dir/sample_stats.json
    and returns the stats; a run with units that failed to generate returns its stats with
    `complete: False`, logs a warning and leaves the folder unmarked, as before."""
    stage = sampling_with(backend_factory) if backend_factory is not None else SAMPLE
    try:
        return run_stage(stage, config, {"problems": Path(problems)}, Path(out_dir)).stats
    except Incomplete as e:
        log.warning("%s", e)
        return e.stats


def _fold_duplicates(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """One row per (problem, candidate, generator, tier): the same program sampled twice by one
    generator is one candidate (the lowest sample index is kept; the count is reported)."""
    best: dict[tuple, dict[str, Any]] = {}
    for r in rows:
        k = (r["problem_id"], r["candidate_id"], r["generator"], r["tier"])
        if k not in best or r["sample_index"] < best[k]["sample_index"]:
            best[k] = r
    return list(best.values()), len(rows) - len(best)
