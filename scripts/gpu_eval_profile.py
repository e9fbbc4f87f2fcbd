"""Where plain transformers `generate` spends its time on the evaluation's shapes (a GPU probe).

    PYTHONPATH=. python3 scripts/gpu_eval_profile.py --out $OUT/eval_profile.json [--hidden 512 --layers 4]

The demo's evaluation on a GPU decodes batches of hundreds to thousands of rows with prompts of
~2,300 tokens (up to ~3,600) and 512 new tokens (bench/bench_evaluate.py times the whole
thing). This probe times the pieces on a random Qwen2 of that size, on synthetic prompts
(random token ids; the time does not depend on which ids): per case the prefill (one new
token) and the decode rate (new tokens past the first, per step), so a change to the decoder
can be judged by the numbers it moves. Plain `generate`: equal prompt lengths against
left-padded ones (the same mean), sampling against greedy, batches of 64 to 2,048 rows.
The project's generate decoder (pipeline/sampling/backends/batched_generate.py: sliced
prefill, reserved KV cache, no sync per step): 64 and 512 rows, and the 2,496 rows of the
demo's evaluation at the longest prompt's width. Then torch profiler tables of a few decode
steps of each (top operators by GPU and by CPU time), and of the decoder at 64 rows (CPU).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _batch(rows: int, mean_len: int, spread: int, vocab: int, pad: int, device: Any):
    """Left-padded random prompts: lengths evenly from mean-spread to mean+spread."""
    import torch

    g = torch.Generator().manual_seed(0)
    lens = [mean_len - spread + (2 * spread * i) // max(rows - 1, 1) for i in range(rows)]
    width = max(lens)
    ids = torch.full((rows, width), pad, dtype=torch.long)
    mask = torch.zeros((rows, width), dtype=torch.long)
    for i, n in enumerate(lens):
        ids[i, width - n :] = torch.randint(3, vocab, (n,), generator=g)
        mask[i, width - n :] = 1
    return ids.to(device), mask.to(device)


def _generate(model, ids, mask, new: int, sample: bool, eos: int, pad: int, **extra) -> float:
    import torch
    from transformers import GenerationConfig

    sampling = (
        {"do_sample": True, "temperature": 1.0, "top_p": 0.95, "top_k": 0}
        if sample
        else {"do_sample": False}
    )
    cfg = GenerationConfig(
        max_new_tokens=new, min_new_tokens=new, pad_token_id=pad, eos_token_id=eos,
        **sampling, **extra,
    )  # fmt: skip
    torch.cuda.synchronize()
    t = time.perf_counter()
    with torch.inference_mode():
        model.generate(input_ids=ids, attention_mask=mask, generation_config=cfg)
    torch.cuda.synchronize()
    return time.perf_counter() - t


def _plain(model, ids, mask, new: int, sample: bool, eos: int, pad: int, extra) -> dict[str, Any]:
    """Plain `generate` on one batch: prefill = a one-token call, a step = the rest / (new-1)."""
    import torch

    _generate(model, ids, mask, 2, sample, eos, pad, **extra)  # this shape's first call
    if ids.device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    prefill = _generate(model, ids, mask, 1, sample, eos, pad, **extra)
    whole = _generate(model, ids, mask, new, sample, eos, pad, **extra)
    step = (whole - prefill) / (new - 1)
    return {
        "width": ids.shape[1], "prefill_s": prefill, "decode_step_ms": 1000 * step,
        "new_tokens_per_s": ids.shape[0] / step, "whole_s": whole, "new": new,
        "peak_gib": torch.cuda.max_memory_allocated() / 2**30 if ids.is_cuda else None,
    }  # fmt: skip


def _decoder(model, eos: int, pad: int):
    from pipeline.sampling.backends.batched_generate import GenerateDecoder

    return GenerateDecoder(model, pad_id=pad, eos_ids={eos}, device=model.device)


def _ours(model, ids, mask, new: int, eos: int, pad: int) -> dict[str, Any]:
    """The project's decoder on one batch: its own prefill and step timings (stats)."""
    import torch

    with torch.inference_mode():
        _decoder(model, eos, pad)._decode_padded(ids, mask, 1.0, 0.95, 2)  # first call
        if ids.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats()
        d = _decoder(model, eos, pad)
        d._decode_padded(ids, mask, 1.0, 0.95, new)
    st = d.stats
    step = st["steps_s"] / max(st["steps"], 1)
    return {
        "width": ids.shape[1], "prefill_s": st["prefill_s"], "decode_step_ms": 1000 * step,
        "new_tokens_per_s": st["row_steps"] / max(st["steps_s"], 1e-9), "new": new,
        "whole_s": st["prefill_s"] + st["steps_s"], "stats": st,
        "peak_gib": torch.cuda.max_memory_allocated() / 2**30 if ids.is_cuda else None,
    }  # fmt: skip


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--mean-len", type=int, default=2300)
    p.add_argument("--spread", type=int, default=300, help="padded cases: +- this many tokens")
    p.add_argument("--new", type=int, default=64, help="decode steps timed per case")
    p.add_argument("--device", default="cuda")
    p.add_argument("--quick", action="store_true", help="CPU smoke: tiny shapes, two cases")
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)

    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    from pipeline.models.tiny import build_tiny_model

    work = Path(tempfile.mkdtemp(prefix="eval-profile-"))
    path = build_tiny_model(work / "m", hidden_size=a.hidden, num_layers=a.layers)
    dev = torch.device(a.device)
    dtype = torch.bfloat16 if dev.type == "cuda" else torch.float32
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype).to(dev).eval()
    vocab, eos = model.config.vocab_size, model.config.eos_token_id
    pad = model.config.pad_token_id
    if dev.type != "cuda":
        torch.cuda.synchronize = lambda *a, **k: None  # type: ignore[assignment]
    result: dict[str, Any] = {
        "env": {
            "device": torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu",
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "dtype": str(dtype),
            "attn_implementation": model.config._attn_implementation,
            "model": {"hidden": a.hidden, "layers": a.layers, "vocab": vocab},
        },
        "cases": [],
    }
    # (name, rows, spread, sample, generate extras)
    # (name, rows, spread, sample, generate extras); "ours" in extras: the project's decoder,
    # its value the prompts' mean length (the demo's longest prompts for the 2,496 rows)
    cases = [
        ("padded-64", 64, a.spread, True, {}),
        ("ours-64", 64, a.spread, True, {"ours": a.mean_len}),
        ("equal-512", 512, 0, True, {}),
        ("padded-512", 512, a.spread, True, {}),
        ("padded-512-greedy", 512, a.spread, False, {}),
        ("padded-1024", 1024, a.spread, True, {}),
        ("padded-2048", 2048, a.spread, True, {}),
        ("ours-512", 512, a.spread, True, {"ours": a.mean_len}),
        ("ours-2496-long", 2496, 0, True, {"ours": 3584}),
    ]
    if a.quick:
        a.mean_len, a.new = 64, 8
        cases = [(n, r // 128, s // 10, x, e) for n, r, s, x, e in cases[2:4]]
        cases.append(("ours-8", 8, 6, True, {"ours": 64}))
    _generate(model, *_batch(8, 64, 0, vocab, pad, dev), 4, True, eos, pad)  # warm-up
    for name, rows, spread, sample, extra in cases:
        try:
            if "ours" in extra:
                ids, mask = _batch(rows, extra["ours"], spread, vocab, pad, dev)
                row = {"case": name, "rows": rows} | _ours(model, ids, mask, a.new, eos, pad)
            else:
                ids, mask = _batch(rows, a.mean_len, spread, vocab, pad, dev)
                row = {"case": name, "rows": rows} | _plain(
                    model, ids, mask, a.new, sample, eos, pad, extra
                )
        except Exception as e:  # noqa: BLE001 - a case that cannot run says why, the rest go on
            row = {"case": name, "rows": rows, "error": repr(e)[:300]}
        ids = mask = None
        print(json.dumps(row), flush=True)
        result["cases"].append(row)
        if dev.type == "cuda":
            torch.cuda.empty_cache()

    # A profiler table of a few decode steps of the padded 512-row case.
    from torch.profiler import ProfilerActivity, profile

    _, rows, spread, _, _ = next(c for c in cases if c[0] == "padded-512")
    ids, mask = _batch(rows, a.mean_len, spread, vocab, pad, dev)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    with profile(activities=acts) as prof:
        _generate(model, ids, mask, 9, True, eos, pad)
    key = "cuda_time_total" if dev.type == "cuda" else "cpu_time_total"
    result["profile_by_device_time"] = prof.key_averages().table(sort_by=key, row_limit=25)
    result["profile_by_cpu_time"] = prof.key_averages().table(
        sort_by="self_cpu_time_total", row_limit=20
    )
    print(result["profile_by_device_time"])
    # The same for the project's decoder on the 2,496 long rows (the last case).
    _, rows, spread, _, extra = cases[-1]
    ids, mask = _batch(rows, extra["ours"], spread, vocab, pad, dev)
    with profile(activities=acts) as prof, torch.inference_mode():
        _decoder(model, eos, pad)._decode_padded(ids, mask, 1.0, 0.95, 9)
    result["ours_profile_by_device_time"] = prof.key_averages().table(sort_by=key, row_limit=25)
    result["ours_profile_by_cpu_time"] = prof.key_averages().table(
        sort_by="self_cpu_time_total", row_limit=20
    )
    print(result["ours_profile_by_device_time"])
    # And of 64 rows, where the GPU has little to do: what each step costs the CPU.
    ids, mask = _batch(64 if not a.quick else 4, a.mean_len, a.spread, vocab, pad, dev)
    with profile(activities=acts) as prof, torch.inference_mode():
        _decoder(model, eos, pad)._decode_padded(ids, mask, 1.0, 0.95, 33)
    result["ours64_profile_by_cpu_time"] = prof.key_averages().table(
        sort_by="self_cpu_time_total", row_limit=25
    )
    print(result["ours64_profile_by_cpu_time"])
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
