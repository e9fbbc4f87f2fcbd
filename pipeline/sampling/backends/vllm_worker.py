"""One data-parallel generation worker, run as a script in vLLM's OWN environment.

    python vllm_worker.py --requests shard.jsonl --out-dir DIR --model M [--engine vllm|transformers]

It imports nothing of the Aletheia package for the vLLM engine (vLLM's environment does
not have it), only the standard library: requests come in as JSON lines (the fields of
`GenerationRequest`), results go out as JSON-lines chunk files `DIR/results-00000.jsonl`,
each written to a temporary name and renamed when complete, then `DIR/DONE` last. The
parent streams chunks as they appear, so a crash keeps every finished chunk.

Engines:
- `vllm`: `LLM.generate` with `SamplingParams(n=...)`; tensor parallelism via
  `--tensor-parallel-size`; the GPU set comes from CUDA_VISIBLE_DEVICES given by the parent.
  UNTESTED HERE: vLLM cannot be installed on our CI or GPU test machines.
- `transformers`: the Aletheia transformers backend (needs `--repo-root`); it exists to test
  this worker's I/O layer and the parent's process management for real.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Iterable, Iterator


def read_requests(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_chunk(out_dir: str, index: int, results: Iterable[dict]) -> None:
    final = os.path.join(out_dir, f"results-{index:05d}.jsonl")
    tmp = final + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in results)
    os.replace(tmp, final)


def answer_regex(choices: list[str]) -> str:
    # A copy of pipeline.common.answers.answer_regex: this worker runs in vLLM's own
    # environment without our package. tests/conformance checks the two agree.
    return r"[\s\S]*\\boxed\{(" + "|".join(re.escape(c) for c in choices) + r")\}"


# --------------------------------------------------------------------------- engines
def run_vllm(args: argparse.Namespace, requests: list[dict]) -> Iterator[list[dict]]:
    """UNTESTED HERE (see module doc). Yields chunks of result dicts."""
    from vllm import LLM, SamplingParams

    llm = LLM(
        model=args.model,
        revision=args.revision,
        tensor_parallel_size=args.tensor_parallel_size,
        seed=0,
        **json.loads(args.engine_args or "{}"),
    )
    tokenizer = llm.get_tokenizer()
    if args.chat_template:
        tokenizer.chat_template = args.chat_template

    def params(r: dict):
        kw = {
            "n": r["n"],
            "temperature": r["temperature"],
            "top_p": r["top_p"],
            "max_tokens": r["max_tokens"],
            "seed": r.get("seed"),
        }
        if r.get("answer_choices"):
            regex = answer_regex(r["answer_choices"])
            try:  # vLLM >= 0.10.2
                from vllm.sampling_params import StructuredOutputsParams

                kw["structured_outputs"] = StructuredOutputsParams(regex=regex)
            except ImportError:  # older vLLM
                from vllm.sampling_params import GuidedDecodingParams

                kw["guided_decoding"] = GuidedDecodingParams(regex=regex)
        return SamplingParams(**kw)

    def prompt_text(r: dict) -> str:
        if r.get("messages") is not None:
            # Continue an assistant pre-fill (last turn the assistant's), as the other backends.
            cont = r["messages"][-1].get("role") == "assistant"
            return tokenizer.apply_chat_template(
                r["messages"],
                tokenize=False,
                add_generation_prompt=not cont,
                continue_final_message=cont,
                **(r.get("chat_template_kwargs") or {}),
            )
        return r["prompt"]

    for start in range(0, len(requests), args.chunk_size):
        batch = requests[start : start + args.chunk_size]
        outs = llm.generate(
            [prompt_text(r) for r in batch], [params(r) for r in batch], use_tqdm=False
        )
        chunk = []
        for r, o in zip(batch, outs):
            chunk.append(
                {
                    "request_id": r["request_id"],
                    "generations": [
                        {
                            "text": c.text,
                            "finish_reason": c.finish_reason or "stop",
                            "prompt_tokens": len(o.prompt_token_ids or []),
                            "completion_tokens": len(c.token_ids),
                        }
                        for c in o.outputs
                    ],
                }
            )
        yield chunk


def run_transformers(args: argparse.Namespace, requests: list[dict]) -> Iterator[list[dict]]:
    if args.repo_root:
        sys.path.insert(0, args.repo_root)
    from pipeline.sampling.backends.base import GenerationRequest
    from pipeline.sampling.backends.transformers_backend import TransformersBackend

    backend = TransformersBackend(
        args.model,
        batch_size=args.batch_size,
        revision=args.revision,
        chat_template=args.chat_template,
    )
    for start in range(0, len(requests), args.chunk_size):
        batch = [
            GenerationRequest.model_validate(r) for r in requests[start : start + args.chunk_size]
        ]
        yield [
            {"request_id": res.request_id, "generations": [g.model_dump() for g in res.generations]}
            for res in backend.generate(batch, progress=False)
        ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--requests", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--revision", default=None)
    p.add_argument("--engine", choices=["vllm", "transformers"], default="vllm")
    p.add_argument("--tensor-parallel-size", type=int, default=1)
    p.add_argument("--engine-args", default=None, help="JSON of extra LLM(...) keyword arguments")
    p.add_argument("--chat-template", default=None)
    p.add_argument("--chunk-size", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--repo-root", default=None)
    args = p.parse_args(argv)

    os.makedirs(args.out_dir, exist_ok=True)
    requests = read_requests(args.requests)
    done_ids: set[str] = set()
    existing = sorted(
        f for f in os.listdir(args.out_dir) if f.startswith("results-") and f.endswith(".jsonl")
    )
    for name in existing:  # a restarted worker skips what it already finished
        with open(os.path.join(args.out_dir, name), encoding="utf-8") as f:
            done_ids.update(json.loads(line)["request_id"] for line in f if line.strip())
    todo = [r for r in requests if r["request_id"] not in done_ids]
    engine = run_vllm if args.engine == "vllm" else run_transformers
    index = len(existing)
    t0 = time.time()
    for chunk in engine(args, todo):
        write_chunk(args.out_dir, index, chunk)
        index += 1
    with open(os.path.join(args.out_dir, "DONE"), "w") as f:
        json.dump(
            {
                "requests": len(requests),
                "generated": len(todo),
                "seconds": time.time() - t0,
                "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
            },
            f,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
