"""The DPO stage in two parts, as stage values run by pipeline/common/runner.py.

- `DPO_RESPONSES` (sharded by problem, gathered): one shard of instances -> every judge's
  responses for every prompt variant (`DPO_RESPONSE_SCHEMA`), through the generation
  backends (`make_backend`: the same code path as policy sampling, so transformers, vllm or
  an OpenAI-compatible server). Its rounds run in a fixed order, each a `ctx.step` sub-step
  with its own folder and marker, so a crash between rounds reruns only the unfinished one:
  `judges` (every judge x variant); `regenerate`, Aletheia's regeneration round, when
  `config.regenerates`: every judge again, over only the instances (per prompt variant)
  whose judges-round responses were all wrong or all right (`regeneration_targets`);
  `fallback`, on_policy's strong-judge round, over only the instances that no judge got
  right in the earlier rounds. Each decision is per instance, so a round gives the same
  responses whatever the sharding. `with_backend(backend)` is the same stage sampling
  through given backends.
- `DPO_PAIRS`: all instances + every responses file (gathered in shard-index order, each
  shard's rounds in round order: `responses_files`) -> `<name>.parquet` (`DPO_SCHEMA`) and
  stats.json. Responses are put back in one fixed order (configured judge order, the
  fallback judge last, then round, then sample index) and instances are paired in table
  order, so the rows do not depend on how the responses were sharded.

`dpo_responses` (one round), `shard_responses` (every round of one shard) and `dpo_pairs`
are thin entry points over the runner for `build_dpo` and the tests (the flows run the
stage values through flows/task.py). `build_dpo` in
`pipeline.instances.stage` is the one-process composition of the two.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from pipeline.common.answers import gold_letter
from pipeline.common.config import RunnerSection
from pipeline.common.hashing import canonical_json, sha256_files
from pipeline.common.parquet import read_parquet, write_parquet
from pipeline.common.progress import progress_file
from pipeline.common.runner import StageResult, run_cached, run_stage
from pipeline.common.stage import Keying, ShardContext, Sharding, Stage, Stats
from pipeline.instances.checks import instance_violations, require
from pipeline.instances.dpo.checks import check_dpo, dpo_judges
from pipeline.instances.dpo.config import DPOConfig, JudgeModelSpec
from pipeline.instances.dpo.cues import cue_warnings, measure_rows
from pipeline.instances.dpo.responses import Response, sample_responses
from pipeline.sampling.backends.base import Backend
from pipeline.sampling.backends.factory import make_backend
from pipeline.sampling.checks import require_served_sources
from schemas.dpo import DPO_RESPONSE_SCHEMA, DPO_SCHEMA
from schemas.instance import INSTANCE_SCHEMA

log = logging.getLogger(__name__)

RESPONSES_VERSION = "1"  # of a round (a sub-step); the shard's stage keys on it too
# 1: split from the one-process stage (its version 2), same rows; 2: prompt / chosen /
# rejected as chat messages (schemas/dpo.py version 2)
PAIRS_VERSION = "2"
RESPONSES_FILE = "responses.parquet"
STATS_FILE = "stats.json"
Round = Literal["judges", "regenerate", "fallback"]
ROUNDS: tuple[str, ...] = ("judges", "regenerate", "fallback")
# One Backend (one judge), a mapping judge name -> Backend, or None: every judge's backend
# is built from its spec.
BackendArg = Backend | Mapping[str, Backend] | None
# Settings that change pairing only, not what is sampled: left out of the responses key.
_PAIRING_ONLY = {"name", "split", "strong_judge", "rejected_judges", "pairs_per_instance",
                 "rejected_form"}  # fmt: skip
# Settings that say which rounds run, not what a round samples: left out of every round's key
# (whether regeneration ran reaches the fallback round's key through its input files).
_ROUND_CHOICE = {"regenerate"}


# --- judges ------------------------------------------------------------------------------


def fallback_spec(config: DPOConfig) -> JudgeModelSpec | None:
    """The on_policy strong-judge fallback, when configured."""
    if config.construction == "on_policy" and config.fallback == "strong_judge":
        return config.fallback_judge
    return None


def resolve_judges(config: DPOConfig, backend: BackendArg) -> DPOConfig:
    """`config` with `judges` named after the passed backends where it names none."""
    if isinstance(backend, Backend) and len(config.judges) > 1:
        raise ValueError("dpo: several judges are configured; pass a mapping name -> backend")
    if config.judges:
        return config
    if backend is None:
        raise ValueError("dpo: no judge models (configure judges or pass a backend)")
    if isinstance(backend, Backend):
        names = [getattr(backend, "model_name", backend.name)]
    else:
        names = list(backend)
    fb = config.fallback_judge.name if config.fallback_judge else None
    judges = [JudgeModelSpec(name=n) for n in names if n != fb]
    return config.model_copy(update={"judges": judges})


def _given(config: DPOConfig, backend: BackendArg) -> dict[str, Backend]:
    if backend is None:
        return {}
    if isinstance(backend, Backend):
        return {config.judges[0].name: backend}
    return dict(backend)


def _describe(spec: JudgeModelSpec, given: Mapping[str, Backend]) -> dict[str, Any]:
    """What identifies a judge's responses in the cache key, without loading the model."""
    if spec.name in given:
        b = given[spec.name]
        return b.describe() if hasattr(b, "describe") else {"name": spec.name}
    from pipeline.sampling.backends.transformers_backend import local_model_revision

    # A local folder is identified by its small files and sizes (the tiny model, a fit).
    return {**spec.model_dump(mode="json"), "local": local_model_revision(spec.model_ref)}


def _templates(config: DPOConfig) -> list[Path]:
    """The files the prompt's wording is read from (their bytes enter the cache keys)."""
    files = [Path(t) for t in (config.prompt_template, config.system_template) if t]
    if config.aletheia_src:
        from pipeline.common.aletheia_prompts import aletheia_files

        files += aletheia_files(config.aletheia_src)
    return files


# --- responses ---------------------------------------------------------------------------


def _response_row(row: Mapping[str, Any], r: Response) -> dict[str, Any]:
    return {
        "instance_id": r.instance_id,
        "prompt_id": row["prompt_id"],
        "variant": r.variant,
        "judge_model": r.judge_model,
        "round": r.round,
        "sample_index": r.sample_index,
        "text": r.text,
        "answer": r.answer,
        "finish_reason": r.finish_reason,
        "prompt_tokens": r.prompt_tokens,
        "completion_tokens": r.completion_tokens,
    }


def _answers(
    rows: Sequence[Mapping[str, Any]], judged: Sequence[Path]
) -> dict[tuple[str, str], list[bool]]:
    """(instance_id, variant) -> whether each usable response (backend errors left out) in
    the earlier rounds' files picked the gold letter."""
    gold = {r["instance_id"]: gold_letter(r["chosen_answer"]) for r in rows}
    out: dict[tuple[str, str], list[bool]] = {}
    for f in judged:
        cols = ["instance_id", "variant", "answer", "finish_reason"]
        t = read_parquet(f, DPO_RESPONSE_SCHEMA).select(cols)
        for i, v, a, why in zip(*(t.column(c).to_pylist() for c in cols), strict=True):
            if i in gold and not why.startswith("error"):
                out.setdefault((i, v), []).append(a == gold[i])
    return out


def _correct(rows: Sequence[Mapping[str, Any]], judged: Sequence[Path]) -> set[tuple[str, str]]:
    """(instance_id, variant) pairs some judge answered correctly in the earlier rounds."""
    return {key for key, right in _answers(rows, judged).items() if any(right)}


def regeneration_reason(right: Sequence[bool]) -> str | None:
    """Why Aletheia samples an instance again, from whether each of its first-round responses
    was correct: none was (`no_correct_response`: the gold would be spliced in), or every one
    was (`every_response_correct`: no rejected); None: it is not sampled again."""
    if not any(right):
        return "no_correct_response"
    return "every_response_correct" if all(right) else None


def regeneration_targets(
    rows: Sequence[Mapping[str, Any]], judged: Sequence[Path], variants: Sequence[str]
) -> dict[tuple[str, str], str]:
    """(instance_id, variant) -> why it is sampled again (see `regeneration_reason`)."""
    answers = _answers(rows, judged)
    out = {}
    for r in rows:
        for v in variants:
            why = regeneration_reason(answers.get((r["instance_id"], v), []))
            if why is not None:
                out[(r["instance_id"], v)] = why
    return out


def _round_specs(config: DPOConfig, round: Round) -> tuple[list[JudgeModelSpec], int]:
    """The judges a round asks and how many samples each gives."""
    if round == "fallback":
        fb = fallback_spec(config)
        if fb is None:
            raise ValueError(
                "dpo responses: the fallback round needs fallback: strong_judge (on_policy)"
            )
        return [fb], config.fallback_samples
    return list(config.judges), config.samples_per_judge


def _sample_round(
    instances: Path,
    out_dir: Path,
    config: DPOConfig,
    given: Mapping[str, Backend],
    round: Round,
    earlier: Sequence[Path],
    progress: bool,
) -> Stats:
    """One round's responses, written to `<out_dir>/responses.parquet`; its stats back."""
    specs, n = _round_specs(config, round)
    rows = read_parquet(instances, INSTANCE_SCHEMA).to_pylist()
    reasons: dict[tuple[str, str], str] = {}
    if round == "regenerate":
        reasons = regeneration_targets(rows, earlier, config.variants)
        todo = {v: [r for r in rows if (r["instance_id"], v) in reasons] for v in config.variants}
    else:
        right = _correct(rows, earlier) if earlier else set()
        todo = {v: [r for r in rows if (r["instance_id"], v) not in right] for v in config.variants}
    got: dict[tuple[str, str, str], list[Response]] = {}
    for spec in specs:  # one judge's model loaded at a time
        if not any(todo.values()):
            break  # nothing to sample: no model is loaded
        b = given.get(spec.name)
        owned = b is None
        if b is None:
            try:
                b = make_backend(spec.source())
            except OSError as e:  # a wrong path or an uncached Hub id: no retry can fix it
                raise ValueError(
                    f"dpo judge {spec.name}: model {spec.model_ref!r} cannot be loaded "
                    f"({' '.join(str(e).split())[:300]})"
                ) from e
        try:
            for variant, part in todo.items():
                out = sample_responses(
                    part, b, spec.name, variant, config, n, round_=round, progress=progress
                )
                for iid, rs in out.items():
                    got[(iid, variant, spec.name)] = rs
        finally:
            if owned:
                b.close()
    by_id = {r["instance_id"]: r for r in rows}
    out_rows = [
        _response_row(by_id[row["instance_id"]], resp)
        for spec in specs
        for variant, part in todo.items()
        for row in part
        for resp in got.get((row["instance_id"], variant, spec.name), [])
    ]
    out_dir.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(out_rows, schema=DPO_RESPONSE_SCHEMA)
    write_parquet(table, out_dir / RESPONSES_FILE, DPO_RESPONSE_SCHEMA)
    return {
        "round": round,
        "instances": len(rows),
        "instances_sampled": {v: len(p) for v, p in todo.items()},
        **(
            {"sampled_again_because": _count_values(reasons.values())}
            if round == "regenerate"
            else {}
        ),
        "responses": len(out_rows),
        "responses_by_judge": {
            s.name: sum(1 for r in out_rows if r["judge_model"] == s.name) for s in specs
        },
        "output": RESPONSES_FILE,
    }


def _round(
    step: Callable[..., Stats],
    instances: Path,
    out_dir: Path,
    config: DPOConfig,
    backend: BackendArg,
    round: Round,
    earlier: Sequence[Path],
    progress: bool,
) -> Stats:
    """One round as a cached sub-step (`step`: the runner's `run_cached`), in its own folder
    with its own marker: keyed on what it samples (its judges, the sampling settings, the
    instances, the templates and the earlier rounds' files), reused when that matches."""
    config = resolve_judges(config, backend)
    given = _given(config, backend)
    if round != "judges" and not earlier:
        raise ValueError(f"dpo responses: the {round} round needs the earlier rounds' files")
    specs, _ = _round_specs(config, round)
    keyed = {
        "config": config.model_dump(
            mode="json", exclude=_PAIRING_ONLY | _ROUND_CHOICE | {"judges", "fallback_judge"}
        ),
        "round": round,
        "judges": [_describe(s, given) for s in specs],
    }
    return step(
        "dpo-responses",
        RESPONSES_VERSION,
        keyed,
        [instances, *_templates(config), *earlier],
        out_dir,
        lambda: _sample_round(instances, out_dir, config, given, round, earlier, progress),
        seed=config.seed,
        outputs=[out_dir / RESPONSES_FILE],
    )


def response_rounds(config: DPOConfig) -> list[Round]:
    """The rounds a shard runs, in the order they run (each reads the ones before it)."""
    rounds: list[Round] = ["judges"]
    if config.regenerates:
        rounds.append("regenerate")
    if fallback_spec(config) is not None:
        rounds.append("fallback")
    return rounds


def responses_outputs(config: DPOConfig, out: Path) -> dict[str, Path]:
    """One responses file per round, keyed by the round, in round order."""
    return {r: out / r / RESPONSES_FILE for r in response_rounds(config)}


def run_responses(
    ctx: ShardContext[DPOConfig], *, backend: BackendArg = None, progress: bool = True
) -> Stats:
    """Every round of one shard, in order, each a `ctx.step` sub-step: a round already
    finished (its marker holds) is not sampled again. Stats: round -> its stats."""
    instances = Path(ctx.inputs["instances"])  # type: ignore[arg-type]
    given = _given(resolve_judges(ctx.config, backend), backend)
    # The judges' servers answer, before any instance is read or model loaded.
    require_served_sources(
        (who, spec.backend, spec.model_ref)
        for who, spec in dpo_judges(ctx.config)
        if spec.name not in given
    )
    files: list[Path] = []
    stats: Stats = {}
    for round_ in response_rounds(ctx.config):
        where = ctx.out / round_
        stats[round_] = _round(
            ctx.step, instances, where, ctx.config, backend, round_, list(files), progress
        )
        files.append(where / RESPONSES_FILE)
    return stats


def _responses_key(
    config: DPOConfig, inputs: Mapping[str, Any], out: Path, *, backend: BackendArg = None
) -> str:
    """What the shard's key needs beyond its config and instances: every judge's identity
    (a given backend's description, or the local model's files) and the templates' bytes."""
    config = resolve_judges(config, backend)
    given = _given(config, backend)
    fb = fallback_spec(config)
    specs = [*config.judges, *([fb] if fb else [])]
    return canonical_json(
        {
            "judges": [_describe(s, given) for s in specs],
            "templates": sha256_files(_templates(config)),
        }
    )


def _responses_folder(out: Path) -> Path:
    """The gathered stage's primary output is `<dpo>/responses`; shards sit beside it."""
    return Path(out).parent


def _responses_part(i: int, n: int) -> str:
    return f"responses/shard-{i:04d}-of-{n:04d}"


def _responses_shards(runner: Any) -> int:
    return int(runner.dpo_shards or runner.sample_shards)


def _responses_plan(config: DPOConfig, runner: RunnerSection) -> str:
    """One section, run twice by the build: on Train (`dpo`) and on Mixed (`mixed_dpo`)."""
    return (
        f"dpo and mixed_dpo: {len(config.judges)} verifier model(s) x "
        f"{config.samples_per_judge} samples, {runner.dpo_shards} shard(s) each on "
        f"{runner.kind}"
    )


DPO_RESPONSES: Stage[DPOConfig] = Stage(
    name="dpo-responses",
    version=RESPONSES_VERSION,
    config=DPOConfig,
    check=check_dpo,
    inputs=("instances",),
    outputs=responses_outputs,
    run=run_responses,
    plan=_responses_plan,
    # Pairing settings do not change what is sampled; the judges enter through key.extra.
    key=Keying(frozenset(_PAIRING_ONLY | {"judges", "fallback_judge"}), _responses_key),
    sharding=Sharding(
        inputs=("instances",),
        schema=INSTANCE_SCHEMA,
        count=_responses_shards,
        placement="sample",  # they load models, like sampling
        merge=None,  # gathered: the pairs read every shard's files, in shard-index order
        stem="instances",
        folder=_responses_folder,
        part=_responses_part,
    ),
    tags=("gpu",),
    resources=lambda cfg, inputs, opened, quiet: (with_backend(None, progress=not quiet), cfg),
    models="pinned",
    reports=lambda cfg, out: progress_file(out),
)


def with_backend(backend: BackendArg, *, progress: bool = True) -> Stage[DPOConfig]:
    """DPO_RESPONSES sampling through `backend` (one Backend, or judge name -> Backend;
    judges it does not name are built from their specs), the progress bar on or off. The
    same name and version; the key names each judge by its backend's description."""
    return replace(
        DPO_RESPONSES,
        run=partial(run_responses, backend=backend, progress=progress),
        key=replace(DPO_RESPONSES.key, extra=partial(_responses_key, backend=backend)),
    )


def responses_files(parts: Sequence[StageResult]) -> list[Path]:
    """Every shard's responses files for the pairs: shards in shard-index order (whatever
    order they finished in), each shard's rounds in round order."""
    ordered = sorted(parts, key=lambda r: r.shard[0])
    return [Path(p) for r in ordered for p in r.outputs.values()]


def dpo_responses(
    instances: Path,
    out_dir: Path,
    config: DPOConfig,
    backend: BackendArg = None,
    *,
    round: Round = "judges",
    judged: Path | Sequence[Path] | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Write `<out_dir>/responses.parquet` (DPO_RESPONSE_SCHEMA) for the instances of one
    shard: every judge x variant (`round="judges"`); every judge again for the instances
    whose responses in `judged` (the judges-round file) were all wrong or all right
    (`round="regenerate"`); or the fallback judge for the instances that no judge got right
    in `judged` (the earlier rounds' files; `round="fallback"`). One round, cached apart
    (`run_cached`), as DPO_RESPONSES runs each."""
    earlier = [Path(judged)] if isinstance(judged, str | Path) else [Path(p) for p in judged or []]
    return _round(
        run_cached, Path(instances), Path(out_dir), config, backend, round, earlier, progress
    )


def shard_responses(
    instances: Path,
    out_dir: Path,
    config: DPOConfig,
    backend: BackendArg = None,
    *,
    progress: bool = True,
) -> tuple[list[Path], dict[str, Any]]:
    """DPO_RESPONSES on one shard: every responses round, each in its own folder and cached
    apart: `<out_dir>/judges/`; `<out_dir>/regenerate/` when the regeneration round is on
    (`config.regenerates`); `<out_dir>/fallback/` when on_policy's strong-judge fallback is
    configured (over what the rounds before it left without a correct response). Returns
    the files (in round order) and the stats (round -> its stats)."""
    config = resolve_judges(config, backend)
    stage = with_backend(backend, progress=progress)
    result = run_stage(stage, config, {"instances": Path(instances)}, Path(out_dir))
    return [result.path(r) for r in result.outputs], result.stats


# --- pairs -------------------------------------------------------------------------------


def _roles(config: DPOConfig) -> tuple[list[str], str, list[str]]:
    """(judges that sample for every instance, the strong judge, the rejected-side judges)."""
    judges = [j.name for j in config.judges]
    strong = config.strong_judge or judges[-1]
    rejected = config.rejected_judges or [j for j in judges if j != strong] or [strong]
    return judges, strong, rejected


def load_responses(
    files: Sequence[Path], config: DPOConfig, rows: Sequence[Mapping[str, Any]]
) -> tuple[dict[tuple[str, str], list[Response]], dict[str, Any]]:
    """(instance_id, variant) -> responses in the fixed order (judge, round, sample); and
    what the extra rounds covered: how many (instance, variant) pairs got fallback samples,
    and how many were sampled again, by reason. Every instance must have every judge's
    responses for every variant: a missing shard is an error, never a silent drop."""
    fb = fallback_spec(config)
    order = [j.name for j in config.judges] + ([fb.name] if fb else [])
    rank = {name: i for i, name in enumerate(order)}
    round_rank = {name: i for i, name in enumerate(ROUNDS)}
    out: dict[tuple[str, str], list[Response]] = {
        (r["instance_id"], v): [] for r in rows for v in config.variants
    }
    for f in files:
        for i, rec in enumerate(read_parquet(f, DPO_RESPONSE_SCHEMA).to_pylist()):
            where = (rec["instance_id"], rec["variant"])
            if rec["judge_model"] not in rank:
                raise ValueError(
                    f"{f} row {i}: judge_model {rec['judge_model']!r} is not one "
                    f"of the configured judges {order}"
                )
            if rec["round"] not in round_rank:
                raise ValueError(f"{f} row {i}: round {rec['round']!r} is not one of {ROUNDS}")
            if where not in out:
                raise ValueError(
                    f"{f} row {i}: instance_id {where[0]} / variant {where[1]} "
                    "is not among the instances and variants being paired"
                )
            out[where].append(
                Response(**{k: rec[k] for k in Response.__dataclass_fields__})  # type: ignore[arg-type]
            )
    fallback_used = 0
    regenerated: dict[str, int] = {}
    golds = {r["instance_id"]: gold_letter(r["chosen_answer"]) for r in rows}
    for (iid, variant), rs in out.items():
        rs.sort(key=lambda r: (rank[r.judge_model], round_rank[r.round], r.sample_index))
        have = {r.judge_model for r in rs if r.round == "judges"}
        missing = [j.name for j in config.judges if j.name not in have]
        if missing:
            raise ValueError(
                f"dpo pairs: instance {iid} ({variant}) has no responses from "
                f"{missing} in the responses files: a responses shard is missing"
            )
        fallback_used += any(r.round == "fallback" for r in rs)
        if any(r.round == "regenerate" for r in rs):
            first = [
                r.answer == golds[iid]
                for r in rs
                if r.round == "judges" and not r.finish_reason.startswith("error")
            ]
            why = regeneration_reason(first) or "other"
            regenerated[why] = regenerated.get(why, 0) + 1
    return out, {
        "fallback_samples_for_instances": fallback_used,
        "sampled_again": dict(sorted(regenerated.items())),
    }


def _count_responses(accuracy: dict[str, dict[str, int]], gold: str, responses: list[Any]) -> None:
    for r in responses:
        acc = accuracy.setdefault(
            r.judge_model, {"responses": 0, "correct": 0, "invalid": 0, "errors": 0}
        )
        acc["responses"] += 1
        acc["correct"] += r.answer == gold
        acc["invalid"] += r.answer is None
        acc["errors"] += r.finish_reason.startswith("error")


def _pairs_for_variant(
    rows: list[dict[str, Any]],
    responses: dict[tuple[str, str], list[Response]],
    variant: str,
    config: DPOConfig,
    roles: tuple[list[str], str, list[str]],
    tally: dict[str, Any],
) -> list[dict[str, Any]]:
    """The DPO rows of one prompt variant, by the configured construction."""
    from pipeline.instances.dpo.aletheia import RejectedQuotas, pick_pair
    from pipeline.instances.dpo.pairs import dpo_row
    from pipeline.instances.dpo.responses import verifier_messages

    _, strong, rejected_judges = roles
    quotas = RejectedQuotas.equal(rejected_judges, len(rows))
    balancer = tally["balancer"]
    out: list[dict[str, Any]] = []
    for row in rows:
        rs = responses[(row["instance_id"], variant)]
        gold = gold_letter(row["chosen_answer"])
        _count_responses(tally["accuracy"], gold, rs)
        if config.construction == "aletheia":
            pair, why = pick_pair(
                row["instance_id"],
                variant,
                gold,
                rs,
                strong,
                quotas,
                config.seed,
                config.answer_format,
                config.rejected_form,
            )
            pairs = [pair] if pair is not None else []
        else:
            pairs, why = balancer.pick(
                row["instance_id"], variant, gold, rs, config.pairs_per_instance
            )
        if why is not None:
            tally["skipped"][why] = tally["skipped"].get(why, 0) + 1
        tally["rejected_regenerated"] += sum(p.rejected.round == "regenerate" for p in pairs)
        if pairs:
            messages = verifier_messages(row, variant, config)
            out += [dpo_row(row, p, messages, config.split) for p in pairs]
    return out


def _count_values(values: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return dict(sorted(counts.items()))


def _count_by(rows: list[dict[str, Any]], column: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r[column]] = counts.get(r[column], 0) + 1
    return dict(sorted(counts.items()))


def pairs_outputs(config: DPOConfig, out: Path) -> dict[str, Path]:
    return {"dpo": out / f"{config.name}.parquet", "stats": out / STATS_FILE}


def run_pairs(ctx: ShardContext[DPOConfig]) -> Stats:
    """Write `<config.name>.parquet` (DPO_SCHEMA) and stats.json from the instances and
    the `responses` input (every responses file, `responses_files`' order)."""
    from pipeline.instances.dpo.pairs import CHOSEN_SOURCES, PairBalancer

    config = ctx.config
    if not config.judges:
        raise ValueError("dpo pairs: config.judges is empty; name the judges of the responses")
    responses = ctx.inputs["responses"]
    files = [Path(responses)] if isinstance(responses, str | Path) else list(responses)
    rows = read_parquet(Path(ctx.inputs["instances"]), INSTANCE_SCHEMA).to_pylist()  # type: ignore[arg-type]
    by_variant, rounds = load_responses(files, config, rows)
    roles = _roles(config)
    tally: dict[str, Any] = {
        "balancer": PairBalancer(config.seed),
        "skipped": {},
        "accuracy": {},
        "rejected_regenerated": 0,
    }
    dpo_rows: list[dict[str, Any]] = []
    for variant in config.variants:
        dpo_rows += _pairs_for_variant(rows, by_variant, variant, config, roles, tally)
    table = pa.Table.from_pylist(dpo_rows, schema=DPO_SCHEMA)
    require(instance_violations(table), f"dpo {config.name}")
    cues = measure_rows(dpo_rows)
    for line in cue_warnings(config.name, cues):
        log.warning("%s", line)
    outputs = pairs_outputs(config, ctx.out)
    ctx.out.mkdir(parents=True, exist_ok=True)
    write_parquet(table, outputs["dpo"], DPO_SCHEMA)
    stats = {
        "instances": len(rows),
        "construction": config.construction,
        "variants": list(config.variants),
        "pairs": len(dpo_rows),
        # which route each row's chosen response took: a correct first-round (or fallback)
        # response, a correct one from the regeneration round, or a trace with the gold
        # spliced in
        "chosen_source": {
            s: sum(1 for r in dpo_rows if r["chosen_source"] == s) for s in CHOSEN_SOURCES
        },
        "instances_short_of_pairs": dict(sorted(tally["skipped"].items())),
        "fallback_samples_for_instances": rounds["fallback_samples_for_instances"],
        "regeneration": {
            "enabled": config.regenerates,
            # (instance, variant) pairs sampled again, by why
            "sampled_again": rounds["sampled_again"],
            "rows_with_regenerated_chosen": sum(
                r["chosen_source"] == "regenerated" for r in dpo_rows
            ),
            "rows_with_regenerated_rejected": tally["rejected_regenerated"],
        },
        "chosen_by_judge": _count_by(dpo_rows, "judge_model"),
        "rejected_by_judge": _count_by(dpo_rows, "rejected_judge_model"),
        "responses_by_judge": dict(sorted(tally["accuracy"].items())),
        # format and length cues between chosen and rejected turns (dpo/cues.py)
        "cues": {s.cue: s.as_dict() for s in cues},
        "rejected_form": config.rejected_form,
        "output": f"{config.name}.parquet",
    }
    outputs["stats"].write_text(json.dumps(stats, indent=2, sort_keys=True, default=str) + "\n")
    return stats


def _templates_key(config: DPOConfig, inputs: Mapping[str, Any], out: Path) -> str:
    """The prompt templates' bytes (the pairs' prompt column is rendered from them)."""
    return sha256_files(_templates(config))


def _pairs_plan(config: DPOConfig, runner: RunnerSection) -> str:
    regen = ", with a regeneration round" if config.regenerates else ""
    return f"dpo and mixed_dpo: {config.construction} pairs ({', '.join(config.variants)})" + regen


DPO_PAIRS: Stage[DPOConfig] = Stage(
    name="dpo-pairs",
    version=PAIRS_VERSION,
    config=DPOConfig,
    # responses: every shard's responses files, in shard-index order (`responses_files`)
    inputs=("instances", "responses"),
    outputs=pairs_outputs,
    run=run_pairs,
    plan=_pairs_plan,
    key=Keying(extra=_templates_key),
)


def dpo_pairs(
    instances: Path, responses: Sequence[Path], out_dir: Path, config: DPOConfig
) -> dict[str, Any]:
    """DPO_PAIRS: DPO / Mixed-DPO from sampled responses: write
    `<out_dir>/<config.name>.parquet` (DPO_SCHEMA) and stats.json. `config.judges` must name
    every judge (in order)."""
    if not config.judges:
        raise ValueError("dpo pairs: config.judges is empty; name the judges of the responses")
    inputs = {"instances": Path(instances), "responses": [Path(p) for p in responses]}
    return run_stage(DPO_PAIRS, config, inputs, Path(out_dir)).stats
