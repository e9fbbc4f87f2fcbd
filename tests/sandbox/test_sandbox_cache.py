"""Caches keyed by content hash: host verdicts (SQLite) and compiled binaries inside the pool
(on each engine: the verdict cache is one file, keyed by each engine's stamp)."""

from __future__ import annotations

import time
import uuid

from sandbox import JudgeRequest, JudgeResult, TestCase, TestResult
from sandbox.cache import VerdictCache


def _sleepy(nonce: str, tl: float = 2.0) -> JudgeRequest:
    src = f"import time\ntime.sleep(0.4)\nprint(int(input()) * 2)  # {nonce}\n"
    return JudgeRequest(
        language="python",
        source=src,
        tests=[TestCase(input="21\n", output="42\n")],
        time_limit_s=tl,
    )


def test_repeated_judgement_never_executes_again(judge_engine):
    nonce = uuid.uuid4().hex
    [first] = judge_engine.judge([_sleepy(nonce)])
    start = time.perf_counter()
    [second] = judge_engine.judge([_sleepy(nonce)])
    elapsed = time.perf_counter() - start
    assert (first.verdict, first.cached) == ("AC", False)
    assert (second.verdict, second.cached) == ("AC", True)
    assert elapsed < 0.2  # the program sleeps 0.4 s: it did not run
    assert second.cache_key == first.cache_key and second.tests == first.tests
    # any change to what decides the verdict is a new key: judged again
    [third] = judge_engine.judge([_sleepy(nonce, tl=3.0)])
    assert third.cached is False and third.cache_key != first.cache_key
    # use_cache=False forces execution
    [fourth] = judge_engine.judge([_sleepy(nonce)], use_cache=False)
    assert fourth.cached is False


def test_cache_key_covers_every_input():
    base = JudgeRequest(
        language="python", source="print(1)", tests=[TestCase(input="", output="1")]
    )
    variants = [
        base.model_copy(update={"source": "print(2)"}),
        base.model_copy(update={"tests": [TestCase(input="x", output="1")]}),
        base.model_copy(update={"time_limit_s": 3.0}),
        base.model_copy(update={"memory_limit_mb": 512}),
        base.model_copy(update={"compare": base.compare.model_copy(update={"mode": "exact"})}),
        base.model_copy(update={"language": "cpp"}),
    ]
    keys = {base.cache_key("sha256:a")} | {v.cache_key("sha256:a") for v in variants}
    assert len(keys) == 1 + len(variants)
    assert base.cache_key("sha256:a") != base.cache_key("sha256:b")  # image digest is part of it
    assert base.cache_key("sha256:a") != base.cache_key("process:python=3.11.2;...")  # the engine
    assert base.cache_key("sha256:a") == JudgeRequest(**base.model_dump()).cache_key("sha256:a")


def test_verdict_cache_persists_and_skips_se(tmp_path):
    path = tmp_path / "v.sqlite"
    cache = VerdictCache(path)
    ok = JudgeResult.from_tests([TestResult(verdict="AC")], 1)
    se = JudgeResult.system_error(1, "container died")
    cache.put("k1", ok)
    cache.put("k2", se)
    cache.close()
    reopened = VerdictCache(path)  # another process / a later run
    got = reopened.get("k1")
    assert got is not None and got.verdict == "AC" and got.cached is True
    assert reopened.get("k2") is None  # SE is never an answer
    assert len(reopened) == 1


def test_compiled_binary_reused_inside_pool(judge_engine):
    src = f"#include <bits/stdc++.h>\nint main(){{long long a,b;std::cin>>a>>b;std::cout<<a+b;}} // {uuid.uuid4()}\n"
    results = []
    for i in range(4):  # same source, new tests each time: verdicts are new, the build is not
        req = JudgeRequest(
            language="cpp", source=src, tests=[TestCase(input=f"{i} 1", output=f"{i + 1}")]
        )
        [r] = judge_engine.judge([req])
        results.append(r)
    assert all(r.verdict == "AC" and not r.cached for r in results)
    assert not results[0].compile_cached
    # a pool of 2: at most one build per container
    assert sum(r.compile_cached for r in results) >= 2
