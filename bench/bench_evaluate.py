"""evaluate() against plain transformers `generate` on the same prompts (target: within 1.2x;
on the H200, the demo's evaluation configs at K=8 in under 90 s).

The floor is what a plain script would do with the same model: the same prompts (the chat
template applied, tokenized), rows of equal sampling settings sorted longest prompt first and
cut into batches of `--floor-batch-size` rows (512; plain `generate` cannot take the
project's batches of thousands: its prefill holds a rows x width x width attention mask),
each batch left-padded and run through `model.generate` once with the same settings
(temperature, top-p, no top-k, the token budget, the EOS ids), and nothing else: no
detokenizing, no scoring, no files. The project's path is the whole `evaluate()` (prompts,
generation, detokenizing, scoring, report, responses and per-instance files). Both share one
loaded model (its load is timed apart), each runs a short warm-up first, and the side-by-side
rounds alternate their order. The headline is the ratio of the two times, measured in this
run; the project's time is also split into its phases (prompts, decoding, detokenizing, the
rest: scoring and files) and its decoding into the generate decoder's prefill and steps,
with its padding and the rows x steps it computed. `--full` times both on
every instance: the target figures. `--loop` adds the transformers backend's per-token loop
(8 sequences a batch: the evaluation's decoder before the generate path) to the side by side.

    .venv/bin/python bench/bench_evaluate.py          # CPU: the test fixture's eval configs
    python3 bench/bench_evaluate.py --data out/demo/hub --device cuda --hidden 512 --layers 4 \\
        --k 8 --max-new-tokens 512 --limit 8 --full --out $OUT/bench_evaluate.json   # H200
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.common.hub_folder import read_config
from pipeline.evaluate import evaluate
from pipeline.evaluate.checkpoint import discard as discard_partial
from pipeline.evaluate.config import EvalConfig
from pipeline.evaluate.runner import eval_requests, open_backend
from pipeline.sampling.backends.base import Backend, GenerationRequest, GenerationResult
from pipeline.sampling.backends.batched_generate import plan_batches

TARGET_S = 90.0  # the project's path over every instance, model load included
TARGET_RATIO = 1.2  # the project's evaluate() over plain generate on the same prompts
# Plain generate's rows per call: its prefill materialises a rows x width x width attention
# mask (and its float copy), so it cannot take the thousands of rows the project's decoder
# batches; 512 is what the evaluation used before and what the floor was measured at.
FLOOR_BATCH = 512


class Counted(Backend):
    """Passes generation through and counts what came back (sequences, tokens, errors)."""

    def __init__(self, inner: Backend) -> None:
        self.inner, self.name = inner, inner.name
        self.sequences = self.tokens = self.errors = 0

    def generate(
        self, requests: Sequence[GenerationRequest], *, progress: bool = True
    ) -> Iterator[GenerationResult]:
        for result in self.inner.generate(requests, progress=progress):
            for g in result.generations:
                self.sequences += 1
                self.tokens += g.completion_tokens or 0
                self.errors += g.finish_reason.startswith("error")
            yield result

    def close(self) -> None:  # the bench closes the shared backend itself, at the end
        pass


def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _reset_peak() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def _peak_gib() -> float | None:
    import torch

    return torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None


def project_path(
    name: str, backend: Any, model: Path, data: Path, work: Path, cfg: EvalConfig
) -> dict[str, Any]:
    """One whole evaluate() on the shared backend, its time split into the backend's phases."""
    discard_partial(work / name)  # a crashed earlier run's generations would be reused: time all
    _reset_peak()
    counted = Counted(backend)
    before = dict(getattr(backend, "timings", {}))
    decoder = getattr(backend, "_generate_decoder", None)
    stats_before = dict(getattr(decoder, "stats", {}))
    t = time.perf_counter()
    report = evaluate(model, data, work / name, cfg, backend=counted)
    eval_s = time.perf_counter() - t
    phases = {k: v - before.get(k, 0.0) for k, v in getattr(backend, "timings", {}).items()}
    # inside decode_s: the generate decoder's prefill and steps, padding, rows computed
    decoding = {k: v - stats_before.get(k, 0) for k, v in getattr(decoder, "stats", {}).items()}
    instances = sum(m["aletheia"]["instances"] for m in report["splits"].values())
    return {
        "path": name,
        "instances": instances,
        "sequences": counted.sequences,
        "generated_tokens": counted.tokens,
        "error_generations": counted.errors,
        "eval_s": eval_s,
        "phases_s": phases | {"rest_s": eval_s - sum(phases.values())},
        "decoder": decoding,
        "sequences_per_s": counted.sequences / eval_s,
        "generated_tokens_per_s": counted.tokens / eval_s,
        "peak_gpu_memory_gib": _peak_gib(),
        "responses": report["files"]["responses"],
    }


def floor_path(
    name: str, backend: Any, data: Path, cfg: EvalConfig, batch_size: int
) -> dict[str, Any]:
    """Plain `model.generate` on the same prompts, in batches of `batch_size` (see the module
    doc)."""
    import torch
    from transformers import GenerationConfig

    model, tok, device = backend.model, backend.tokenizer, backend.device
    instances = {s: read_config(data, s, cfg.limit, cfg.split).to_pylist() for s in cfg.splits}
    requests = [q for s, rows in instances.items() for q in eval_requests(rows, s, cfg)]
    t = time.perf_counter()
    rows, too_long = [], 0
    for q in requests:
        ids = tok(backend.render_prompt(q), add_special_tokens=False).input_ids
        if len(ids) + q.max_tokens > backend.max_positions:
            too_long += q.n  # the project answers these with an error, generating nothing
            continue
        rows += [
            SimpleNamespace(prompt_ids=ids, temperature=q.temperature, top_p=q.top_p,
                            max_tokens=q.max_tokens, seed=0)
            for _ in range(q.n)
        ]  # fmt: skip
    tokenize_s = time.perf_counter() - t
    plan = plan_batches(rows, batch_size=batch_size, max_batch_tokens=backend.max_batch_tokens)
    eos = sorted(backend.eos_ids)
    _reset_peak()
    t = time.perf_counter()
    outs = []
    for n, batch in enumerate(plan):
        first = rows[batch[0]]
        width = max(len(rows[i].prompt_ids) for i in batch)
        ids = torch.full((len(batch), width), backend.pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for j, i in enumerate(batch):
            ids[j, width - len(rows[i].prompt_ids) :] = torch.tensor(rows[i].prompt_ids)
            mask[j, width - len(rows[i].prompt_ids) :] = 1
        sampling = (
            {"do_sample": True, "temperature": first.temperature, "top_p": first.top_p, "top_k": 0}
            if first.temperature > 0
            else {"do_sample": False}
        )
        config = GenerationConfig(
            max_new_tokens=first.max_tokens, pad_token_id=backend.pad_id, eos_token_id=eos,
            **sampling,
        )  # fmt: skip
        torch.manual_seed(n)
        with torch.inference_mode():
            out = model.generate(
                input_ids=ids.to(device), attention_mask=mask.to(device), generation_config=config
            )
        outs.append(out[:, width:])
    _sync()
    generate_s = time.perf_counter() - t
    tokens = 0
    for out in outs:  # new tokens up to each row's first EOS (counted after the clock)
        hit = torch.isin(out, torch.tensor(eos, device=out.device)).int().cumsum(1) > 0
        tokens += int((~hit).sum())
    return {
        "path": name,
        "sequences": len(rows),
        "too_long": too_long,
        "batches": len(plan),
        "batch_rows": [len(b) for b in plan],
        "generated_tokens": tokens,
        "tokenize_s": tokenize_s,
        "eval_s": generate_s,
        "generated_tokens_per_s": tokens / generate_s,
        "peak_gpu_memory_gib": _peak_gib(),
    }


def _keys(responses: str) -> list[tuple]:
    rows = [json.loads(x) for x in Path(responses).read_text().splitlines()]
    return sorted((r["split"], r["instance_id"], tuple(r["pair"] or ()), r["sample"]) for r in rows)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, help="published folder with the eval configs "
                   "(default: the test fixture's, written to a temporary folder)")  # fmt: skip
    p.add_argument("--model", type=Path, help="model folder (default: a random Qwen2, built)")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--device", default=None, help="cuda / cpu (default: cuda when present)")
    p.add_argument("--dtype", default=None, help="the backend's dtype (default: its own)")
    p.add_argument("--k", type=int, default=8)
    p.add_argument("--max-new-tokens", type=int, default=64)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--pairwise", action="store_true", help="also the round-robin pair prompts")
    p.add_argument("--limit", type=int, default=None, help="instances per split, side by side")
    p.add_argument("--full", action="store_true", help="then both on every instance")
    p.add_argument("--loop", action="store_true", help="also the per-token loop, side by side")
    p.add_argument("--loop-batch-size", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=None, help="(default: evaluate's)")
    p.add_argument(
        "--floor-batch-size",
        type=int,
        default=FLOOR_BATCH,
        help="rows per plain generate call (its prefill holds a rows x width^2 mask)",
    )
    p.add_argument("--max-batch-tokens", type=int, default=None)
    p.add_argument("--repeats", type=int, default=1, help="side-by-side rounds, order alternating")
    p.add_argument("--no-cudnn-attention", action="store_true",
                   help="turn torch's cuDNN attention off for both paths (docs/scale.md: the "
                   "first use of each shape was slow on the H200)")  # fmt: skip
    p.add_argument("--work", type=Path, help="where the evaluations write (default: temporary)")
    p.add_argument("--out", type=Path, help="the JSON file (default: <work>/bench_evaluate.json)")
    a = p.parse_args(argv)

    import torch
    import transformers

    from pipeline.models.tiny import build_tiny_model

    if a.no_cudnn_attention:
        torch.backends.cuda.enable_cudnn_sdp(False)
    work = a.work or Path(tempfile.mkdtemp(prefix="bench-evaluate-"))
    data = a.data
    if data is None:
        from tests.train.rowgen import write_dataset

        data = write_dataset(work / "data")
    model = a.model or build_tiny_model(
        work / f"model-h{a.hidden}-l{a.layers}", hidden_size=a.hidden, num_layers=a.layers
    )
    device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    base = {"k": a.k, "max_new_tokens": a.max_new_tokens, "temperature": a.temperature,
            "pairwise": a.pairwise, "limit": a.limit, "progress": False}  # fmt: skip
    opts: dict[str, Any] = {"type": "transformers", "device": device}
    for key in ("dtype", "batch_size", "max_batch_tokens"):
        if getattr(a, key) is not None:
            opts[key] = getattr(a, key)
    cfg = EvalConfig.model_validate(base | {"backend": opts})  # the evaluation's defaults
    t = time.perf_counter()
    backend = open_backend(model, cfg)
    load_s = time.perf_counter() - t
    loop = None
    if a.loop:
        loop_cfg = cfg.model_copy(update={"backend": cfg.backend.model_copy(
            update={"decoder": "loop", "batch_size": a.loop_batch_size})})  # fmt: skip
        loop = open_backend(model, loop_cfg)

    def run(name: str, c: EvalConfig) -> dict[str, Any]:
        if name.startswith("floor"):
            return floor_path(name, backend, data, c, a.floor_batch_size)
        which = loop if name.startswith("loop") else backend
        return project_path(name, which, model, data, work, c)

    warm = cfg.model_copy(update={"limit": 1, "max_new_tokens": 4, "splits": ["heldout"]})
    paths = ["project", "floor"] + (["loop"] if loop else [])
    for name in paths:
        run(f"{name}-warmup", warm)

    rounds: list[dict[str, dict[str, Any]]] = []
    for r in range(a.repeats):
        order = paths if r % 2 == 0 else paths[::-1]  # neither always first
        got = {name: run(f"{name}-{r}", cfg) for name in order}
        print(json.dumps({k: {x: v[x] for x in ("eval_s", "sequences")} for k, v in got.items()}))
        rounds.append(got)
    med = {n: statistics.median(x[n]["eval_s"] for x in rounds) for n in paths}
    ratio = med["project"] / med["floor"]
    described = backend.describe() if hasattr(backend, "describe") else {}
    result: dict[str, Any] = {
        "about": "bench/bench_evaluate.py: evaluate() against plain transformers generate on "
        "the same prompts (generate in batches of floor_batch_size rows), same model, side by "
        "side in one run",
        "env": {
            "device": torch.cuda.get_device_name(0)
            if device == "cuda"
            else platform.processor() or "cpu",
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "model": str(model) if a.model else {"hidden": a.hidden, "layers": a.layers},
            "data": str(data) if a.data else "test fixture (tests/train/rowgen.py)",
            "backend": described,
            "load_s": load_s,
            "cudnn_attention": torch.backends.cuda.cudnn_sdp_enabled(),
            "argv": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()},
        },
        "side_by_side": {
            "rounds": rounds,
            "eval_s_median": med,
            "ratio_project_over_floor": ratio,
        },
    }
    if loop:
        same = all(
            _keys(x["loop"]["responses"]) == _keys(x["project"]["responses"]) for x in rounds
        )
        result["side_by_side"] |= {"loop_speedup": med["loop"] / med["project"],
                                   "same_response_rows": same}  # fmt: skip
    first = rounds[0]["project"]
    print(
        f"side by side ({first['instances']} instances, {first['sequences']} sequences, K={a.k}, "
        f"{a.max_new_tokens} new tokens, {described.get('dtype')}, batch {described.get('batch_size')}): "
        f"evaluate() {med['project']:.1f}s, plain generate {med['floor']:.1f}s -> ratio {ratio:.2f}"
        + (f"; the per-token loop {med['loop']:.1f}s" if loop else "")
    )
    if a.full:
        every = cfg.model_copy(update={"limit": None})
        full = {"floor": run("floor-full", every), "project": run("project-full", every)}
        full_ratio = full["project"]["eval_s"] / full["floor"]["eval_s"]
        total = full["project"]["eval_s"] + load_s
        result["full"] = full | {
            "ratio_project_over_floor": full_ratio,
            "project_total_s": total,
            "target_s": TARGET_S,
            "target_ratio": TARGET_RATIO,
            "targets_met": total < TARGET_S and full_ratio <= TARGET_RATIO,
        }
        ph = full["project"]["phases_s"]
        print(
            f"every instance ({full['project']['instances']} instances, "
            f"{full['project']['sequences']} sequences, {full['project']['generated_tokens']} "
            f"new tokens): evaluate() {full['project']['eval_s']:.1f}s "
            f"(+ {load_s:.1f}s model load = {total:.1f}s; target < {TARGET_S:.0f}s), plain "
            f"generate {full['floor']['eval_s']:.1f}s -> ratio {full_ratio:.2f} (target <= "
            f"{TARGET_RATIO}); evaluate()'s phases: "
            + ", ".join(f"{k.removesuffix('_s')} {v:.1f}s" for k, v in ph.items())
        )
        dec = full["project"]["decoder"]
        if dec.get("batches"):
            print(
                f"the generate decoder: {dec['batches']:.0f} batches of {dec['rows']:.0f} rows, "
                f"prefill {dec['prefill_s']:.1f}s over {dec['padded_prompt_tokens']:.0f} prompt "
                f"tokens ({dec['prompt_tokens'] / dec['padded_prompt_tokens']:.0%} not padding), "
                f"{dec['steps']:.0f} steps {dec['steps_s']:.1f}s "
                f"({1000 * dec['steps_s'] / max(dec['steps'], 1):.1f} ms a step), "
                f"{dec['row_steps'] / max(dec['rows'] * dec['steps'] / dec['batches'], 1):.0%} "
                f"of rows x steps computed ({dec['compactions']:.0f} drops of finished rows)"
            )
    backend.close()
    if loop:
        loop.close()
    out = a.out or work / "bench_evaluate.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"written: {out}")
    return result


if __name__ == "__main__":
    main()
