"""The openai backend against a real server process (`transformers serve` with the tiny model),
directly and through a fault-injecting HTTP proxy (a real server in the path that answers some
requests with 429/503/400 before forwarding the rest)."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from pipeline.common.answers import answer_regex
from pipeline.sampling.backends.base import GenerationRequest
from pipeline.sampling.backends.openai_backend import (
    AnswerChoicesUnsupported,
    OpenAIBackend,
)
from pipeline.sampling.backends.server import ManagedServer, ServerStartError, free_port
from tests.sampling.serving import start_transformers_serve

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tiny_model_dir):
    srv = start_transformers_serve(tiny_model_dir)
    yield srv
    srv.stop()
    assert srv.proc.poll() is not None  # stopped for real


def _reqs():
    return [
        GenerationRequest(
            request_id="chat",
            messages=[{"role": "user", "content": "Sum two ints."}],
            n=3,
            max_tokens=8,
            seed=5,
        ),
        GenerationRequest(request_id="text", prompt="def solve():", n=2, max_tokens=6, seed=6),
    ]


def test_real_server_fans_out_when_n_is_ignored(server, tiny_model_dir):
    backend = OpenAIBackend(server.base_url, str(tiny_model_dir), concurrency=4)
    results = {r.request_id: r for r in backend.generate(_reqs(), progress=False)}
    assert len(results["chat"].generations) == 3 and len(results["text"].generations) == 2
    assert backend.server_honours_n is False  # transformers serve returns one choice for n > 1
    for res in results.values():
        assert res.backend == "openai" and res.model == str(tiny_model_dir)
        for g in res.generations:
            assert not g.finish_reason.startswith("error"), g.finish_reason
            assert g.prompt_tokens and g.completion_tokens and g.completion_tokens <= 8
    assert any(g.text for g in results["text"].generations)


class FaultProxy:
    """A real HTTP server (uvicorn + starlette) that fails the first requests, then forwards."""

    def __init__(self, upstream: str, script: list[int]):
        import uvicorn
        from starlette.applications import Starlette
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        self.script = list(script)  # status codes to answer before forwarding
        self.seen = 0

        async def handle(request):
            self.seen += 1
            body = await request.body()
            if self.script:
                code = self.script.pop(0)
                return JSONResponse(
                    {"error": f"injected {code}"},
                    status_code=code,
                    headers={"retry-after": "0"} if code == 429 else {},
                )
            async with httpx.AsyncClient(timeout=60) as c:
                r = await c.post(
                    upstream + request.url.path.removeprefix("/v1"),
                    content=body,
                    headers={"content-type": "application/json"},
                )
            return Response(r.content, status_code=r.status_code, media_type="application/json")

        app = Starlette(routes=[Route("/v1/{path:path}", handle, methods=["POST"])])
        self.port = free_port()
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="error")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        for _ in range(100):
            if self.server.started:
                return self
            time.sleep(0.05)
        raise RuntimeError("proxy did not start")

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)


def test_retries_on_429_and_5xx_then_succeeds(server, tiny_model_dir):
    with FaultProxy(server.base_url, [429, 503, 500]) as proxy:
        backend = OpenAIBackend(
            f"http://127.0.0.1:{proxy.port}",
            str(tiny_model_dir),
            concurrency=1,
            backoff_s=0.01,
            server_honours_n=False,
        )
        [res] = list(backend.generate([_reqs()[1]], progress=False))
    assert backend.retries_done == 3 and proxy.seen == 3 + 2
    assert all(not g.finish_reason.startswith("error") for g in res.generations)


def test_client_errors_are_recorded_not_retried(server, tiny_model_dir):
    with FaultProxy(server.base_url, [400]) as proxy:
        backend = OpenAIBackend(
            f"http://127.0.0.1:{proxy.port}",
            str(tiny_model_dir),
            concurrency=1,
            server_honours_n=False,
        )
        [res] = list(backend.generate([_reqs()[1]], progress=False))
    assert backend.retries_done == 0 and proxy.seen == 1
    assert [g.finish_reason[:15] for g in res.generations] == ["error:http_400:"] * 2


def test_gives_up_after_max_retries_on_a_dead_port(tiny_model_dir):
    backend = OpenAIBackend(f"http://127.0.0.1:{free_port()}", "m", max_retries=2, backoff_s=0.01)
    [res] = list(backend.generate([_reqs()[1]], progress=False))
    assert backend.retries_done == 2
    assert all(g.finish_reason.startswith("error:gave up after 2 retries") for g in res.generations)


def test_answer_choices_need_guided_decoding():
    backend = OpenAIBackend("http://127.0.0.1:9", "m")
    req = GenerationRequest(request_id="v", prompt="pick", answer_choices=["A", "B"])
    with pytest.raises(AnswerChoicesUnsupported, match="guided"):
        list(backend.generate([req], progress=False))
    guided = OpenAIBackend("http://127.0.0.1:9", "m", guided="structured_outputs")
    _, body = guided._payload(req, 1, 0)
    assert body["structured_outputs"]["regex"] == answer_regex(["A", "B"])
    import re

    assert re.fullmatch(answer_regex(["A", "B"]), "thinking...\n\\boxed{B}")
    assert not re.fullmatch(answer_regex(["A", "B"]), "\\boxed{C}")


def test_assistant_prefill_is_continued_not_reopened():
    backend = OpenAIBackend("http://127.0.0.1:9", "m")
    turn = [{"role": "user", "content": "q"}]
    _, fresh = backend._payload(GenerationRequest(request_id="u", messages=turn), 1, 0)
    assert "continue_final_message" not in fresh
    prefilled = turn + [{"role": "assistant", "content": "<think>\n"}]
    _, body = backend._payload(GenerationRequest(request_id="p", messages=prefilled), 1, 0)
    assert body["continue_final_message"] is True and body["add_generation_prompt"] is False
    assert body["messages"][-1] == {"role": "assistant", "content": "<think>\n"}


def test_managed_server_reports_a_crashing_command():
    port = free_port()
    srv = ManagedServer(
        ["python3", "-c", "import sys; print('boom'); sys.exit(3)"], port=port, startup_timeout_s=20
    )
    with pytest.raises(ServerStartError, match="code 3") as e:
        srv.start()
    assert "boom" in str(e.value)


def test_sample_stage_through_the_real_server(server, tiny_model_dir, tmp_path):
    """A pool whose model source is the openai backend: candidates carry its provenance."""
    from pipeline.common.parquet import read_parquet, write_parquet
    from pipeline.sampling.config import SampleConfig
    from pipeline.sampling.stage import sample
    from schemas.problem import PROBLEM_SCHEMA
    from schemas.tables import models_to_table
    from tests.sampling.problems_fixture import sum_problem

    problems = tmp_path / "problems.parquet"
    write_parquet(models_to_table([sum_problem()], PROBLEM_SCHEMA), problems, PROBLEM_SCHEMA)
    cfg = SampleConfig.model_validate(
        {
            "progress": False,
            "sources": [
                {
                    "kind": "model",
                    "name": "served-tiny",
                    "model": str(tiny_model_dir),
                    "tier": "strong",
                    "backend": {"type": "openai", "base_url": server.base_url, "concurrency": 2},
                    "languages": ["python", "java"],
                    "samples_per_problem": 2,
                    "max_tokens": 6,
                    "seed": 3,
                }
            ],
        }
    )
    stats = sample(cfg, problems, tmp_path / "out")
    rows = read_parquet(tmp_path / "out" / "candidates.parquet").to_pylist()
    assert stats["sources"]["served-tiny"]["generated"] == 4 and stats["complete"]
    assert len(rows) + stats["duplicates_folded"] == 4
    assert {r["backend"] for r in rows} == {"openai"} and {r["tier"] for r in rows} == {"strong"}
    assert all(
        r["completion_tokens"] and r["prompt_tokens"] and r["seed"] is not None for r in rows
    )
