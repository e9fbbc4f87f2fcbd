"""`openai` backend: any OpenAI-compatible server (`vllm serve`, SGLang, `transformers serve`, a hosted API).

- async httpx with a bounded number of requests in flight;
- retries with exponential backoff and jitter on 429, 5xx, timeouts and connection errors
  (a `Retry-After` header is honoured); other 4xx are recorded as `error:` generations;
- `n` samples per request where the server honours it; where it returns fewer choices
  than asked (e.g. `transformers serve`), the missing samples are fetched with further
  requests, each with its own derived seed, and the backend remembers to fan out;
- `answer_choices` through the server's guided-decoding extra (vLLM's `structured_outputs`
  or the older `guided_regex`); with no such extra configured it is a clear error.

`generate` runs the event loop in a helper thread and yields results as they finish.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import random
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import httpx
from rich.markup import escape

from pipeline.common.answers import answer_regex
from pipeline.sampling.backends.base import (
    Backend,
    Generation,
    GenerationRequest,
    GenerationResult,
    continues_final_message,
)
from pipeline.sampling.seeds import derive_seed

log = logging.getLogger(__name__)

GuidedMode = Literal["structured_outputs", "guided_regex"]
RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class AnswerChoicesUnsupported(RuntimeError):
    """The configured server cannot constrain the answer to the given choices."""


class OpenAIBackend(Backend):
    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        concurrency: int = 16,
        max_retries: int = 6,
        timeout_s: float = 600.0,
        backoff_s: float = 1.0,
        server_honours_n: bool | None = None,
        guided: GuidedMode | None = None,
        chat_template: str | None = None,
        extra_body: dict[str, Any] | None = None,
        model_revision: str | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.base_url = base_url.rstrip("/")
        if not self.base_url.endswith("/v1"):
            self.base_url += "/v1"
        self.model = model
        self.api_key = api_key
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.backoff_s = backoff_s
        self.server_honours_n = server_honours_n  # None: find out from the first answer
        self.guided = guided
        self.extra_body = dict(extra_body or {})
        if chat_template is not None:
            self.extra_body["chat_template"] = chat_template  # vLLM / SGLang request field
        self.model_revision = model_revision
        self.retries_done = 0  # for stats and tests

    # ----------------------------------------------------------------- payloads
    def _payload(
        self, req: GenerationRequest, n: int, seed: int | None
    ) -> tuple[str, dict[str, Any]]:
        body: dict[str, Any] = {
            "model": self.model,
            "n": n,
            "temperature": req.temperature,
            "top_p": req.top_p,
            "max_tokens": req.max_tokens,
            **self.extra_body,
        }
        if seed is not None:
            body["seed"] = seed
        if req.answer_choices:
            if self.guided is None:
                raise AnswerChoicesUnsupported(
                    f"request {req.request_id}: answer_choices needs a server with guided decoding; "
                    "set guided='structured_outputs' (vLLM >= 0.10) or 'guided_regex' (older vLLM)"
                )
            regex = answer_regex(req.answer_choices)
            if self.guided == "structured_outputs":
                body["structured_outputs"] = {"regex": regex}
            else:
                body["guided_regex"] = regex
        if req.messages is not None:
            body["messages"] = req.messages
            if req.chat_template_kwargs:  # vLLM / SGLang request field (e.g. enable_thinking)
                body["chat_template_kwargs"] = req.chat_template_kwargs
            if continues_final_message(req.messages):
                # vLLM / SGLang request fields: continue the assistant pre-fill. A hosted API
                # without them opens a new turn instead; prefer a vLLM/SGLang server there.
                body["continue_final_message"] = True
                body["add_generation_prompt"] = False
            return "/chat/completions", body
        body["prompt"] = req.prompt
        return "/completions", body

    # ----------------------------------------------------------------- HTTP
    async def _post(
        self, client: httpx.AsyncClient, path: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        """POST with retries; returns the JSON answer or raises httpx.HTTPStatusError (no retry)."""
        attempt = 0
        while True:
            try:
                resp = await client.post(path, json=body)
                if resp.status_code not in RETRY_STATUS:
                    resp.raise_for_status()
                    return resp.json()
                delay = _retry_after(resp)
                why = f"HTTP {resp.status_code}"
            except (httpx.TimeoutException, httpx.TransportError) as e:
                delay, why = None, type(e).__name__
            attempt += 1
            if attempt > self.max_retries:
                raise RuntimeError(f"gave up after {self.max_retries} retries ({why})")
            self.retries_done += 1
            wait = (
                delay
                if delay is not None
                else self.backoff_s * 2 ** (attempt - 1) * (0.5 + random.random())
            )
            log.debug("retrying %s in %.2fs (%s)", path, wait, why)
            await asyncio.sleep(min(wait, 60.0))

    async def _one(
        self, client: httpx.AsyncClient, sem: asyncio.Semaphore, req: GenerationRequest
    ) -> GenerationResult:
        gens: list[Generation] = []
        base_seed = req.seed if req.seed is not None else derive_seed(req.request_id)
        call = 0
        try:
            while len(gens) < req.n:
                want = req.n - len(gens) if self.server_honours_n is not False else 1
                seed = base_seed if call == 0 else derive_seed(base_seed, "call", call)
                path, body = self._payload(req, want, seed)
                async with sem:
                    answer = await self._post(client, path, body)
                call += 1
                got = _generations(answer, path)
                if not got:
                    raise RuntimeError("server answered with no choices")
                if want > 1 and self.server_honours_n is None:
                    self.server_honours_n = len(got) >= want
                    if not self.server_honours_n:
                        log.info("%s ignores n: fanning out requests client-side", self.base_url)
                gens.extend(got[: req.n - len(gens)])
        except httpx.HTTPStatusError as e:
            reason = f"error:http_{e.response.status_code}: {e.response.text[:200]}"
            gens += [Generation(text="", finish_reason=reason)] * (req.n - len(gens))
        except RuntimeError as e:
            gens += [Generation(text="", finish_reason=f"error:{e}")] * (req.n - len(gens))
        return GenerationResult(
            request_id=req.request_id,
            model=self.model,
            model_revision=self.model_revision,
            backend=self.name,
            generations=gens,
        )

    async def _run(self, requests: Sequence[GenerationRequest], out: queue.Queue) -> None:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        limits = httpx.Limits(
            max_connections=self.concurrency, max_keepalive_connections=self.concurrency
        )
        sem = asyncio.Semaphore(self.concurrency)
        async with httpx.AsyncClient(
            base_url=self.base_url, headers=headers, timeout=self.timeout_s, limits=limits
        ) as client:
            # A bounded window of tasks, so millions of requests do not all become tasks at once.
            pending: set[asyncio.Task] = set()
            it = iter(requests)
            exhausted = False
            while pending or not exhausted:
                while not exhausted and len(pending) < 4 * self.concurrency:
                    try:
                        pending.add(asyncio.create_task(self._one(client, sem, next(it))))
                    except StopIteration:
                        exhausted = True
                if not pending:
                    break
                finished, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    out.put(task.result())

    def generate(
        self, requests: Sequence[GenerationRequest], *, progress: bool = True
    ) -> Iterator[GenerationResult]:
        from rich.progress import Progress

        requests = list(requests)
        for r in requests:  # fail before any traffic if the answers cannot be constrained
            if r.answer_choices and self.guided is None:
                self._payload(r, 1, None)
        out: queue.Queue = queue.Queue()
        done = object()
        errors: list[BaseException] = []

        def worker() -> None:
            try:
                asyncio.run(self._run(requests, out))
            except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
                errors.append(e)
            finally:
                out.put(done)

        thread = threading.Thread(target=worker, name="openai-backend", daemon=True)
        thread.start()
        with Progress(disable=not progress, transient=True) as bar:
            task = bar.add_task(f"generate {escape(self.model)}", total=len(requests))
            while (item := out.get()) is not done:
                bar.advance(task)
                yield item
        thread.join()
        if errors:
            raise errors[0]


def _retry_after(resp: httpx.Response) -> float | None:
    value = resp.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _generations(answer: dict[str, Any], path: str) -> list[Generation]:
    choices = sorted(answer.get("choices") or [], key=lambda c: c.get("index", 0))
    usage = answer.get("usage") or {}
    single = len(choices) == 1  # usage is per request: per-sample counts only when one sample
    gens = []
    for c in choices:
        text = (
            (c.get("message") or {}).get("content")
            if path == "/chat/completions"
            else c.get("text")
        )
        gens.append(
            Generation(
                text=text or "",
                finish_reason=c.get("finish_reason") or "stop",
                prompt_tokens=usage.get("prompt_tokens"),
                completion_tokens=usage.get("completion_tokens") if single else None,
            )
        )
    return gens
