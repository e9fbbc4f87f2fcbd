"""`vllm` backend: offline `LLM.generate` in worker subprocesses of vLLM's own environment.

vLLM pins its own torch / transformers / fastapi, which conflict with Prefect and TRL, so
it never runs in our process. The parent splits the requests into one JSON-lines shard per
data-parallel worker (one worker per group of `tensor_parallel_size` GPUs, pinned with
CUDA_VISIBLE_DEVICES), starts `vllm_worker.py` with vLLM's Python, and streams the
workers' result chunks back as they are renamed into place.

UNTESTED HERE with vLLM itself: vLLM cannot be installed on our CI or GPU test machines.
Everything around it (shards, chunks, the worker processes, GPU pinning, failures) is
tested with the worker's `transformers` engine, which goes through the same I/O layer.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rich.markup import escape

from pipeline.sampling.backends.base import Backend, Generation, GenerationRequest, GenerationResult

WORKER_SCRIPT = Path(__file__).with_name("vllm_worker.py")
REPO_ROOT = Path(__file__).resolve().parents[3]


class WorkerFailed(RuntimeError):
    """A generation worker exited non-zero; finished chunks were still yielded."""


class VLLMBackend(Backend):
    def __init__(
        self,
        model: str | Path,
        *,
        python: str | Path | None = None,
        gpus: Sequence[int] | None = None,
        tensor_parallel_size: int = 1,
        engine: str = "vllm",
        engine_args: dict[str, Any] | None = None,
        revision: str | None = None,
        chat_template: str | None = None,
        model_name: str | None = None,
        work_dir: str | Path | None = None,
        chunk_size: int = 64,
        batch_size: int = 8,
        poll_s: float = 0.2,
        keep_files: bool = False,
    ) -> None:
        if engine not in ("vllm", "transformers"):
            raise ValueError(f"engine must be vllm or transformers, got {engine!r}")
        if gpus is not None and (not gpus or len(gpus) % tensor_parallel_size):
            raise ValueError(
                f"{len(gpus or [])} GPUs do not split into groups of {tensor_parallel_size}"
            )
        self.model = str(model)
        self.python = str(python or sys.executable)
        self.gpus = list(gpus) if gpus is not None else None
        self.tp = tensor_parallel_size
        self.engine = engine
        self.engine_args = engine_args or {}
        self.revision = revision
        self.chat_template = chat_template
        self.model_name = model_name or self.model
        self.work_dir = Path(work_dir) if work_dir else None
        self.chunk_size = chunk_size
        self.batch_size = batch_size
        self.poll_s = poll_s
        self.keep_files = keep_files  # keep shards, chunks and logs (debugging, tests)
        self.last_work_dir: Path | None = None
        self.name = "vllm" if engine == "vllm" else "vllm-worker:transformers"
        self._procs: list[subprocess.Popen] = []

    def gpu_groups(self) -> list[list[int] | None]:
        if self.gpus is None:
            return [None]
        return [self.gpus[i : i + self.tp] for i in range(0, len(self.gpus), self.tp)]

    def _command(self, shard: Path, out_dir: Path) -> list[str]:
        cmd = [
            self.python,
            str(WORKER_SCRIPT),
            "--requests",
            str(shard),
            "--out-dir",
            str(out_dir),
            "--model",
            self.model,
            "--engine",
            self.engine,
            "--tensor-parallel-size",
            str(self.tp),
            "--chunk-size",
            str(self.chunk_size),
            "--batch-size",
            str(self.batch_size),
            "--engine-args",
            json.dumps(self.engine_args),
        ]
        if self.revision:
            cmd += ["--revision", self.revision]
        if self.chat_template:
            cmd += ["--chat-template", self.chat_template]
        if self.engine == "transformers":
            cmd += ["--repo-root", str(REPO_ROOT)]
        return cmd

    def generate(
        self, requests: Sequence[GenerationRequest], *, progress: bool = True
    ) -> Iterator[GenerationResult]:
        from rich.progress import Progress

        requests = list(requests)
        groups = self.gpu_groups()
        root = Path(tempfile.mkdtemp(prefix="vllm-", dir=self.work_dir))
        self.last_work_dir = root
        workers: list[tuple[subprocess.Popen, Path, Path]] = []
        try:
            for k, group in enumerate(groups):
                shard_reqs = requests[k :: len(groups)]  # round-robin: balanced lengths
                if not shard_reqs:
                    continue
                wdir = root / f"worker-{k}"
                out_dir = wdir / "out"
                out_dir.mkdir(parents=True)
                shard = wdir / "requests.jsonl"
                shard.write_text(
                    "".join(r.model_dump_json() + "\n" for r in shard_reqs), encoding="utf-8"
                )
                env = dict(os.environ)
                if group is not None:
                    env["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, group))
                with open(wdir / "worker.log", "wb") as log:  # the child keeps its own descriptor
                    proc = subprocess.Popen(
                        self._command(shard, out_dir),
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        env=env,
                        start_new_session=True,
                    )
                self._procs.append(proc)
                workers.append((proc, out_dir, wdir / "worker.log"))
            seen: set[Path] = set()
            with Progress(disable=not progress, transient=True) as bar:
                task = bar.add_task(
                    f"generate {escape(self.model_name)} x{len(workers)} workers",
                    total=len(requests),
                )
                while True:
                    alive = [p.poll() is None for p, _, _ in workers]
                    for _, out_dir, _ in workers:
                        for chunk in sorted(out_dir.glob("results-*.jsonl")):
                            if chunk in seen:
                                continue
                            seen.add(chunk)
                            for line in chunk.read_text(encoding="utf-8").splitlines():
                                if line.strip():
                                    bar.advance(task)
                                    yield self._result(json.loads(line))
                    if not any(alive):
                        break
                    time.sleep(self.poll_s)
            failed = [(p.returncode, log) for p, _, log in workers if p.returncode != 0]
            if failed:
                code, log = failed[0]
                tail = log.read_text(errors="replace")[-3000:]
                raise WorkerFailed(
                    f"{len(failed)} worker(s) failed; first exit code {code}:\n{tail}"
                )
        finally:
            self._stop_workers()
            if not self.keep_files:
                shutil.rmtree(root, ignore_errors=True)

    def _result(self, row: dict[str, Any]) -> GenerationResult:
        return GenerationResult(
            request_id=row["request_id"],
            model=self.model_name,
            model_revision=self.revision,
            backend=self.name,
            generations=[Generation(**g) for g in row["generations"]],
        )

    def _stop_workers(self) -> None:
        for p in self._procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)  # the worker's own session
                    p.wait(timeout=20)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        self._procs = []

    def close(self) -> None:
        self._stop_workers()
