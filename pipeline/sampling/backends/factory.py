"""Build the backend a model source asks for (and the server it may need)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from pipeline.sampling.backends.base import Backend, GenerationRequest, GenerationResult
from pipeline.sampling.config import ModelSource, OpenAIOptions, TransformersOptions, VLLMOptions


class ServedBackend(Backend):
    """An openai backend talking to a server this process launched; closing stops the server."""

    def __init__(self, server: Any, inner: Backend) -> None:
        self.server, self.inner = server, inner
        self.name = inner.name

    def generate(
        self, requests: Sequence[GenerationRequest], *, progress: bool = True
    ) -> Iterator[GenerationResult]:
        return self.inner.generate(requests, progress=progress)

    def close(self) -> None:
        self.inner.close()
        self.server.stop()


# The options each backend takes as keyword arguments of the same names.
TRANSFORMERS_OPTIONS = ("device", "dtype", "batch_size", "threads", "decoder", "max_batch_tokens")
VLLM_OPTIONS = ("python", "gpus", "tensor_parallel_size", "engine", "engine_args", "chunk_size")
OPENAI_OPTIONS = (
    "concurrency",
    "max_retries",
    "timeout_s",
    "server_honours_n",
    "guided",
    "extra_body",
)


def make_backend(source: ModelSource) -> Backend:
    """The backend `source.backend` names, opened on `source.model`."""
    opts = source.backend
    if isinstance(opts, TransformersOptions):
        from pipeline.sampling.backends.transformers_backend import TransformersBackend

        kw = _options(opts, TRANSFORMERS_OPTIONS)
        return TransformersBackend(source.model, **_local_identity(source), **kw)
    if isinstance(opts, VLLMOptions):
        from pipeline.sampling.backends.vllm_backend import VLLMBackend

        return VLLMBackend(source.model, **_local_identity(source), **_options(opts, VLLM_OPTIONS))
    assert isinstance(opts, OpenAIOptions)
    return _openai(source, opts)


def _options(opts: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {name: getattr(opts, name) for name in names}


def _local_identity(source: ModelSource) -> dict[str, Any]:
    """What a backend that loads the model itself records of it: revision, template, name."""
    return {
        "revision": source.revision,
        "chat_template": source.chat_template_text(),
        "model_name": source.name,
    }


def _openai(source: ModelSource, opts: OpenAIOptions) -> Backend:
    """A client of the server `backend.base_url` names (checked now: a dead server, or one
    serving another model, is one line rather than retries per request), or of a `vllm serve`
    this process launches."""
    from pipeline.sampling.backends.openai_backend import OpenAIBackend

    api_key = os.environ.get(opts.api_key_env) if opts.api_key_env else None
    if opts.api_key_env and not api_key:
        raise ValueError(
            f"source {source.name}: environment variable {opts.api_key_env} is not set"
        )
    kw = _options(opts, OPENAI_OPTIONS) | {
        "api_key": api_key,
        "chat_template": source.chat_template_text(),
        "model_revision": source.revision,
    }
    if opts.base_url is not None:
        from pipeline.model_refs import require_served

        where = f"{source.name}: backend.base_url"
        require_served(where, opts.base_url, source.model, opts.api_key_env)
        return OpenAIBackend(opts.base_url, source.model, **kw)
    server = _launch_vllm_serve(source, opts)
    return ServedBackend(server, OpenAIBackend(server.base_url, source.model, **kw))


def _launch_vllm_serve(source: ModelSource, opts: OpenAIOptions) -> Any:
    """Launch `vllm serve` for `source` (UNTESTED HERE: vLLM cannot be installed on our
    machines)."""
    from pipeline.sampling.backends.server import ManagedServer, free_port, vllm_serve_command

    serve = opts.serve
    assert serve is not None
    port = free_port()
    env = {"CUDA_VISIBLE_DEVICES": ",".join(map(str, serve.gpus))} if serve.gpus else {}
    command = vllm_serve_command(
        source.model,
        python=serve.python,
        port=port,
        tensor_parallel_size=serve.tensor_parallel_size,
        served_name=source.model,
        extra_args=serve.extra_args,
    )
    server = ManagedServer(command, port=port, env=env, startup_timeout_s=serve.startup_timeout_s)
    return server.start()
