"""Prefect tasks: one per stage, each a thin call into `pipeline.*` (no stage logic here).

Every task takes plain JSON-able inputs (config sections as dicts, paths as strings,
upstream results) and returns a small JSON-able result: the output paths, a content
digest of the outputs and the stage's stats. Because a downstream task's inputs
contain its upstream results (and so their digests), the Prefect cache key
(INPUTS + TASK_SOURCE, see `configured`) changes whenever anything upstream changes.
Each task also passes a digest of its stage's own source code, so editing a stage
invalidates its cached Prefect result; the stage's `_stage.json` marker then decides
whether any work is really needed.
"""

from __future__ import annotations

import errno
import hashlib
import importlib
import json
import logging
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import INPUTS, TASK_SOURCE
from prefect.filesystems import LocalFileSystem
from prefect.tasks import Task

from flows.progress import progress_file, reporting
from pipeline.common.fingerprint import fingerprints
from pipeline.common.hashing import sha256_files

log = logging.getLogger(__name__)

CACHE_POLICY = INPUTS + TASK_SOURCE


def jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=str))


SHARED_CODE = ("schemas", "pipeline.common")  # every stage depends on these


def code_digest(*modules: str) -> str:
    """Hash of the source files of the given packages/modules and of the shared code: a
    stage's code version. Part of each task's inputs, so editing a stage invalidates it."""
    h = hashlib.sha256()
    for name in (*modules, *SHARED_CODE):
        mod = importlib.import_module(name)
        root = (
            Path(mod.__file__).parent
            if Path(mod.__file__).name == "__init__.py"
            else Path(mod.__file__)
        )
        files = sorted(root.rglob("*.py")) if root.is_dir() else [root]
        for f in files:
            h.update(f.relative_to(root.parent).as_posix().encode())  # not machine-specific
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def result(stage: str, outputs: dict[str, Path], stats: dict[str, Any]) -> dict[str, Any]:
    files = [p for p in outputs.values() if Path(p).exists()]
    return jsonable(
        {
            "stage": stage,
            "outputs": {k: str(v) for k, v in outputs.items()},
            "digest": sha256_files(files)[:16],
            # rows + content hash of each Parquet output: where two builds part (printed
            # by the flow; not part of `ref`, so cache keys stay as they were)
            "fingerprints": fingerprints(outputs),
            "stats": stats,
            "ran_on": _ran_on(),  # where a shard ran
        }
    )


def _ran_on() -> dict[str, Any]:
    where: dict[str, Any] = {"host": socket.gethostname(), "pid": os.getpid()}
    ray = sys.modules.get("ray")  # only when this process is a Ray worker (or driver)
    if ray is not None and ray.is_initialized():
        where["ray_node"] = ray.get_runtime_context().get_node_id()
    return where


def ref(result_: dict[str, Any]) -> dict[str, Any]:
    """What a downstream task takes from an upstream result: its outputs and their digest.

    Stats and where the task ran are left out, so the downstream cache key depends on the
    content of the inputs only (a cached or re-executed upstream with equal outputs hits).
    """
    return {"stage": result_["stage"], "outputs": result_["outputs"], "digest": result_["digest"]}


# Failures worth retrying: the machine or a service hiccuped. A bad input or config
# (ValueError, TypeError, KeyError, schema errors) fails at once: retrying cannot fix it.
_TRANSIENT_NAMES = (
    "SandboxError",
    "APIError",
    "DockerException",
    "HTTPError",
    "HfHubHTTPError",
    "RemoteProtocolError",
    "ReadTimeout",
    "ConnectTimeout",
    "RayTaskError",
)


# OSErrors that mean the machine or the paths are set up wrong, not that something
# hiccuped: a retry cannot fix them and a retry loop on a full disk only hides the cause.
_PERMANENT_ERRNOS = {
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.ENOENT: "no such file or directory",
    errno.ENOTDIR: "a path component is not a directory",
    errno.EISDIR: "is a directory",
    errno.EEXIST: "file exists",
    errno.ENAMETOOLONG: "file name too long",
    errno.EFBIG: "file too large",
}
_PERMANENT_OSERRORS = (
    PermissionError,
    FileNotFoundError,
    IsADirectoryError,
    NotADirectoryError,
    FileExistsError,
)


def permanent_os_error(exc: BaseException) -> str | None:
    """Why `exc` is an OSError no retry can fix (a short phrase), or None."""
    if not isinstance(exc, OSError):
        return None
    if exc.errno in _PERMANENT_ERRNOS:
        return _PERMANENT_ERRNOS[exc.errno]
    if isinstance(exc, _PERMANENT_OSERRORS):  # raised by hand, without an errno
        return type(exc).__name__
    return None


def is_transient(exc: BaseException) -> bool:
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(status, int):  # an HTTP answer: only server-side trouble and rate limits
        return status >= 500 or status == 429
    if isinstance(exc, OSError):  # includes ConnectionError and TimeoutError
        return permanent_os_error(exc) is None
    return bool({c.__name__ for c in type(exc).__mro__} & set(_TRANSIENT_NAMES))


def retry_transient(task: Task, task_run: Any, state: Any) -> bool:
    """Prefect retry condition: retry only transient failures (see is_transient)."""
    try:
        state.result()
    except Exception as exc:  # noqa: BLE001 - the task's own exception, whatever it is
        transient = is_transient(exc)
        if not transient:
            why = permanent_os_error(exc)
            if why:
                log.error(
                    "%s failed: %s (%s); not retried: fix the machine or path and run again",
                    task.name,
                    why,
                    exc,
                )
            else:
                log.info(
                    "%s failed with %s: not transient, not retried", task.name, type(exc).__name__
                )
        return transient
    return False


# (Prefect API URL, result folder) -> saved block slug. Keyed by the API too: a block
# saved on one Prefect server does not exist on another (tests start their own).
_SAVED_STORAGE: dict[tuple[str, str], str] = {}


def _api_url() -> str:
    from prefect.settings import PREFECT_API_URL

    return str(PREFECT_API_URL.value() or "")


def result_storage(path: Path) -> str:
    """A LocalFileSystem block for `path`, saved on the current Prefect server once
    (Prefect 3 requires a persisted block for result storage); returns its slug."""
    base = str(Path(path).resolve())
    key = (_api_url(), base)
    if key not in _SAVED_STORAGE:
        name = "aletheia-results-" + hashlib.sha256(base.encode()).hexdigest()[:12]
        LocalFileSystem(basepath=base).save(name, overwrite=True)
        _SAVED_STORAGE[key] = f"local-file-system/{name}"
    return _SAVED_STORAGE[key]


def configured(t: Task, cfg: Any, outputs: list[Path]) -> Task:
    """Apply the run config's retries, timeout and cache settings to a task.

    Results are persisted next to the outputs they describe (`<out_dir>/.prefect/results`),
    so deleting a build also deletes its cache. If an output went missing anyway, the
    cached result is refreshed instead of trusted.
    """
    storage = result_storage(cfg.out_dir / ".prefect" / "results")
    missing = [p for p in outputs if not Path(p).exists()]
    return t.with_options(
        retries=cfg.retry.retries,
        retry_delay_seconds=cfg.retry.backoff_s,
        retry_jitter_factor=cfg.retry.jitter_factor,
        retry_condition_fn=retry_transient,
        timeout_seconds=cfg.retry.timeout_s,
        cache_policy=CACHE_POLICY,
        persist_result=True,
        result_storage=storage,
        refresh_cache=bool(missing),
    )


_IMPORTS = threading.Lock()


def _resolve_model_classes() -> None:
    """transformers resolves its classes lazily, and not thread-safely: two model tasks
    starting side by side (`runner.model_parallel_shards`) failed with "cannot import name
    'GraniteConfig'". Resolve the ones the model stages use once, under a lock."""
    with _IMPORTS:
        import transformers

        for name in (
            "AutoTokenizer",
            "AutoModelForCausalLM",
            "GraniteConfig",
            "GraniteForCausalLM",
            "PreTrainedTokenizerFast",
        ):
            getattr(transformers, name)


# --- stages ------------------------------------------------------------------------------


@task(name="ingest", tags=["cpu"])
def ingest_task(sources: list[str], source_digest: str, config: dict, out: str, code: str) -> dict:
    from pipeline.problems.config import IngestConfig
    from pipeline.problems.stage import ingest, output_paths

    stats = ingest(sources, Path(out), IngestConfig.model_validate(config), show_progress=False)
    paths = output_paths(Path(out))
    return result(
        "ingest", {"problems": paths["problems"], "quarantine": paths["quarantine"]}, stats
    )


@task(name="splits", tags=["cpu"])
def splits_task(problems: dict, config: dict, out_dir: str, code: str) -> dict:
    from pipeline.splits.config import SplitConfig
    from pipeline.splits.stage import split_problems

    out = Path(out_dir)
    stats = split_problems(
        Path(problems["outputs"]["problems"]),
        out,
        SplitConfig.model_validate(config),
        show_progress=False,
    )
    names = ("train", "heldout", "train_questions", "assignments", "quarantine")
    return result("splits", {n: out / f"{n}.parquet" for n in names}, stats)


@task(name="sample-shard", tags=["gpu"])
def sample_task(
    problems_shard: str, shard_digest: str, config: dict, out_dir: str, code: str
) -> dict:
    from pipeline.models.cpu import pin_cpu_kernels
    from pipeline.sampling.config import SampleConfig
    from pipeline.sampling.stage import sample

    pin_cpu_kernels()  # local models: the same floats on any x86 machine
    _resolve_model_classes()
    out = Path(out_dir)
    cfg = SampleConfig.model_validate(config).model_copy(update={"progress": False})
    with reporting(progress_file(out)):  # lines in the log, not a redrawn bar
        stats = sample(cfg, Path(problems_shard), out)
    return result("sample", {"candidates": out / "candidates.parquet"}, stats)


@task(name="judge-shard", tags=["cpu", "sandbox"])
def judge_task(
    candidates: str,
    candidates_digest: str,
    problems: dict,
    config: dict,
    sandbox: dict,
    out: str,
    code: str,
) -> dict:
    import pyarrow.parquet as pq

    from pipeline.judge.config import JudgeConfig, SandboxSection
    from pipeline.judge.interface import open_judge
    from pipeline.judge.stage import judge_candidates

    cfg = JudgeConfig.model_validate(config).model_copy(update={"progress": False})
    args = (Path(candidates), Path(problems["outputs"]["problems"]), Path(out), cfg)
    if pq.ParquetFile(candidates).metadata.num_rows == 0:  # e.g. every edit proven unchanged
        with reporting(progress_file(out)):
            stats = judge_candidates(*args)  # no programs: no judge engine is started
        return result("judge", {"judged": Path(out)}, stats)
    with (
        open_judge(SandboxSection.model_validate(sandbox)) as engine,
        reporting(progress_file(out)),
    ):
        stats = judge_candidates(*args, client=engine)
        stats["sandbox_image"] = str(getattr(engine, "image", "") or "")
        stats["judge_stamp"] = engine.stamp
    return result("judge", {"judged": Path(out)}, stats)


@task(name="assemble", tags=["cpu"])
def assemble_task(
    judged: dict, problems: dict, splits: dict, config: dict, out_dir: str, code: str
) -> dict:
    from pipeline.instances.config import AssembleConfig
    from pipeline.instances.stage import assemble

    out = Path(out_dir)
    cfg = AssembleConfig.model_validate(config)
    stats = assemble(
        Path(judged["outputs"]["judged"]),
        Path(problems["outputs"]["problems"]),
        Path(splits["outputs"]["train"]).parent,
        out,
        cfg,
    )
    return result("assemble", assemble_outputs(cfg, out), stats)


def assemble_outputs(cfg: Any, out: Path) -> dict[str, Path]:
    """Assembly's tables: one per split, and `<split>.test` beside each evaluation split."""
    from pipeline.instances.config import test_table_name

    files = {s.name: out / f"{s.name}.parquet" for s in cfg.splits}
    for s in cfg.splits:
        if s.has_test_split:
            files[test_table_name(s.name)] = out / f"{test_table_name(s.name)}.parquet"
    return files


@task(name="adversarial-edits", tags=["cpu"])
def adversarial_edits_task(
    instances: str, instances_digest: str, problems: dict, config: dict, out_dir: str, code: str
) -> dict:
    """Plan the bias edits and write the edited programs for the judge shards (no sandbox)."""
    from pipeline.instances.adversarial.config import AdversarialConfig
    from pipeline.instances.stage import adversarial_edits

    cfg = AdversarialConfig.model_validate(config)
    with reporting(progress_file(out_dir)):
        stats = adversarial_edits(
            Path(instances), Path(problems["outputs"]["problems"]), Path(out_dir), cfg
        )
    return result(
        f"adversarial-edits-{cfg.split}", {"edits": Path(out_dir) / "edits.parquet"}, stats
    )


@task(name="adversarial", tags=["cpu", "sandbox"])
def adversarial_task(
    instances: str,
    instances_digest: str,
    problems: dict,
    config: dict,
    sandbox: dict,
    out_dir: str,
    code: str,
    judged_edits: dict | None = None,
) -> dict:
    """Adv / Mixed. `judged_edits` (the judge shards' result on the planned edits): read
    each edit's verdict from it, no sandbox here; None: re-judge in this task."""
    from pipeline.instances.adversarial.config import AdversarialConfig
    from pipeline.instances.stage import adversarial

    cfg = AdversarialConfig.model_validate(config)
    args = (Path(instances), Path(problems["outputs"]["problems"]), Path(out_dir), cfg)
    if judged_edits is not None:
        stats = adversarial(*args, judged_edits=Path(judged_edits["outputs"]["judged"]))
    else:
        from pipeline.judge.config import SandboxSection
        from pipeline.judge.interface import open_judge

        with open_judge(SandboxSection.model_validate(sandbox)) as engine:
            stats = adversarial(*args, client=engine)
    return result(
        f"adversarial-{cfg.split}", {cfg.split: Path(out_dir) / f"{cfg.split}.parquet"}, stats
    )


@task(name="dpo-responses-shard", tags=["gpu"])
def dpo_responses_task(
    instances_shard: str, shard_digest: str, config: dict, out_dir: str, code: str
) -> dict:
    """Every DPO judge's responses for one shard of instances (each round cached apart)."""
    from pipeline.instances.dpo.config import DPOConfig
    from pipeline.instances.dpo.stage import shard_responses
    from pipeline.models.cpu import pin_cpu_kernels

    pin_cpu_kernels()  # local models: the same floats on any x86 machine
    _resolve_model_classes()
    cfg = DPOConfig.model_validate(config)
    with reporting(progress_file(out_dir)):
        files, stats = shard_responses(Path(instances_shard), Path(out_dir), cfg, progress=False)
    return result("dpo-responses", {p.parent.name: p for p in files}, stats)


@task(name="dpo-pairs", tags=["cpu"])
def dpo_pairs_task(
    instances: str,
    instances_digest: str,
    responses: list[dict],
    config: dict,
    out_dir: str,
    code: str,
) -> dict:
    """Chosen / rejected pairs from every shard's responses (`responses`: their results)."""
    from pipeline.instances.dpo.config import DPOConfig
    from pipeline.instances.dpo.stage import dpo_pairs

    cfg = DPOConfig.model_validate(config)
    files = [Path(p) for r in responses for p in r["outputs"].values()]
    stats = dpo_pairs(Path(instances), files, Path(out_dir), cfg)
    return result(cfg.name, {"dpo": Path(out_dir) / f"{cfg.name}.parquet"}, stats)


@task(name="tiny-model", tags=["cpu"])
def tiny_model_task(out_dir: str, seed: int, code: str) -> dict:
    from pipeline.models.cpu import pin_cpu_kernels
    from pipeline.models.tiny import build_tiny_model

    pin_cpu_kernels()
    _resolve_model_classes()
    path = build_tiny_model(Path(out_dir), seed=seed)
    weights = path / "model.safetensors"
    return result(
        "tiny-model",
        # the weights too: the DPO responses depend on them, so their digest must as well
        {"config": path / "config.json", "tokenizer": path / "tokenizer.json", "weights": weights},
        {"dir": str(path), "weights_sha256": sha256_files([weights])[:16]},
    )


@task(name="fit-policy", tags=["cpu"])
def policy_task(spec: dict, problems: dict, code: str) -> dict:
    """Fit one tiny local policy on the ingested problems' reference solutions (or reuse it)."""
    from pipeline.models.config import PolicyFit
    from pipeline.models.policy import examples_from_problems, read_fit
    from pipeline.models.stage import fit_examples
    from pipeline.sampling.stage import load_problems

    _resolve_model_classes()
    fit = PolicyFit.model_validate(spec)
    examples = examples_from_problems(load_problems(Path(problems["outputs"]["problems"])), fit)
    with reporting(policy_progress_file(fit.dir)):
        path = fit_examples(fit, examples)  # FIT_POLICY through the runner
    return result(f"policy-{fit.name}", {"fit": path / "fit.json"}, read_fit(path))


def policy_progress_file(model_dir: str | Path) -> Path:
    """Beside the model folder, not in it: a fit replaces the folder when it is done."""
    d = Path(model_dir)
    return d.with_name(d.name + ".progress.json")


@task(name="evaluate-published", tags=["cpu"])
def evaluate_published_task(
    model: str,
    model_digest: str,
    hub_dir: str,
    hub_digest: str,
    config: dict,
    out_dir: str,
    code: str,
) -> dict:
    """Evaluate a verifier on a published folder's evaluation configs (the run config's
    `evaluate:` section). Cached by the model's and the published splits' digests; a run
    cut short resumes from its finished generations (pipeline/evaluate/checkpoint.py)."""
    from pipeline.evaluate import evaluate
    from pipeline.models.cpu import pin_cpu_kernels

    pin_cpu_kernels()  # local models: the same floats on any x86 machine
    _resolve_model_classes()
    out = Path(out_dir)
    with reporting(progress_file(out)):
        report = evaluate(model, Path(hub_dir), out, config)
    return result(
        "evaluate",
        {"report": Path(report["files"]["json"]), "markdown": Path(report["files"]["markdown"])},
        {"flags": report["flags"]},
    )


@task(name="publish", tags=["cpu"])
def publish_task(build_dir: str, build_digest: str, hub_dir: str, config: dict, code: str) -> dict:
    from pipeline.publish.config import PublishConfig
    from pipeline.publish.stage import build_hub_folder

    stats = build_hub_folder(Path(build_dir), Path(hub_dir), PublishConfig.model_validate(config))
    return result("publish", {"card": Path(hub_dir) / "README.md"}, stats)


@task(
    name="push",
    tags=["network"],
    retries=3,
    retry_delay_seconds=[10, 60, 300],
    retry_condition_fn=retry_transient,
)
def push_task(hub_dir: str, repo_id: str, tag: str, endpoint: str | None, private: bool) -> dict:
    """Not cached: pushing is idempotent by itself (it diffs against the remote first)."""
    from pipeline.publish.push import push_folder

    r = push_folder(hub_dir, repo_id, tag=tag, endpoint=endpoint, private=private)
    return jsonable(
        {
            "repo_id": r.repo_id,
            "commit": r.commit,
            "head": r.head,
            "tag": r.tag,
            "uploaded": len(r.uploaded),
            "deleted": len(r.deleted),
            "unchanged": len(r.unchanged),
        }
    )
