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


def make_backend(source: ModelSource) -> Backend:
    opts = source.backend
    template = source.chat_template_text()
    if isinstance(opts, TransformersOptions):
        from pipeline.sampling.backends.transformers_backend import TransformersBackend

        return TransformersBackend(
            source.model,
            device=opts.device,
            dtype=opts.dtype,
            batch_size=opts.batch_size,
            threads=opts.threads,
            revision=source.revision,
            chat_template=template,
            model_name=source.name,
            decoder=opts.decoder,
            max_batch_tokens=opts.max_batch_tokens,
        )
    if isinstance(opts, VLLMOptions):
        from pipeline.sampling.backends.vllm_backend import VLLMBackend

        return VLLMBackend(
            source.model,
            python=opts.python,
            gpus=opts.gpus,
            tensor_parallel_size=opts.tensor_parallel_size,
            engine=opts.engine,
            engine_args=opts.engine_args,
            revision=source.revision,
            chat_template=template,
            model_name=source.name,
            chunk_size=opts.chunk_size,
        )
    assert isinstance(opts, OpenAIOptions)
    from pipeline.sampling.backends.openai_backend import OpenAIBackend

    api_key = os.environ.get(opts.api_key_env) if opts.api_key_env else None
    if opts.api_key_env and not api_key:
        raise ValueError(
            f"source {source.name}: environment variable {opts.api_key_env} is not set"
        )

    def client(base_url: str, model: str) -> OpenAIBackend:
        return OpenAIBackend(
            base_url,
            model,
            api_key=api_key,
            concurrency=opts.concurrency,
            max_retries=opts.max_retries,
            timeout_s=opts.timeout_s,
            server_honours_n=opts.server_honours_n,
            guided=opts.guided,
            chat_template=template,
            extra_body=opts.extra_body,
            model_revision=source.revision,
        )

    if opts.base_url is not None:
        from pipeline.model_refs import require_served

        # A dead server or one serving another model: one line now, not retries per request.
        require_served(
            f"{source.name}: backend.base_url", opts.base_url, source.model, opts.api_key_env
        )
        return client(opts.base_url, source.model)
    # Launch `vllm serve` (UNTESTED HERE: vLLM cannot be installed on our machines).
    from pipeline.sampling.backends.server import ManagedServer, free_port, vllm_serve_command

    serve = opts.serve
    assert serve is not None
    port = free_port()
    env = {"CUDA_VISIBLE_DEVICES": ",".join(map(str, serve.gpus))} if serve.gpus else {}
    server = ManagedServer(
        vllm_serve_command(
            source.model,
            python=serve.python,
            port=port,
            tensor_parallel_size=serve.tensor_parallel_size,
            served_name=source.model,
            extra_args=serve.extra_args,
        ),
        port=port,
        env=env,
        startup_timeout_s=serve.startup_timeout_s,
    ).start()
    return ServedBackend(server, client(server.base_url, source.model))
