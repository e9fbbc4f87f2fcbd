"""Assembly's prompt-length cap: batched token counts vs one row at a time, side by side.

The cap renders each instance's Think and Instruct prompts and counts their tokens
(`pipeline/instances/tokens.py`). Both sides here render the same prompts with the same
tokenizer (the tiny model's byte-level BPE fast tokenizer, trained on the fly: no weights
can be downloaded here); they differ only in how the texts reach it: one tokenizer call
per row, or one call per 256 texts. First a check that both give the same count for every
row, then interleaved timed runs (the side that runs first alternates), medians compared.
Rendering alone is timed too, as it is common to both sides.

    .venv/bin/python bench/bench_tokens.py               # ~1-2 minutes on 2 cores
    .venv/bin/python bench/bench_tokens.py --rows 2000   # the run recorded in docs/scale.md

Measured (2,000 rows, 4,000 prompts of ~6,500 tiny-tokenizer tokens, load ~4 on 2 cores):
one call per row 34.3 s, batched 33.5 s (medians of 5), rendering alone 6.0 s: 1.02x. The
BPE work per text dominates; the batch call saves only per-call overhead, and its threads
have no free core here.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.instances.tokens import TokenCounter
from pipeline.models.tiny import build_tiny_model

WORDS = ["read", "n", "integers", "print", "the", "sum", "modulo", "query", "graph", "edge"]
CODE_LINE = "    for i in range(n): total = (total + a[i] * b[i]) % MOD\n"


def rows(n: int, seed: int = 0) -> list[tuple[str, list[str], list[str]]]:
    """Instance-like rows: a statement of ~300-3,000 characters, 2-5 candidates of 5-60 lines."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        k = rng.randint(2, 5)
        query = f"Problem {i}. " + " ".join(rng.choices(WORDS, k=rng.randint(50, 500)))
        cands = ["def main():\n" + CODE_LINE * rng.randint(5, 60) for _ in range(k)]
        out.append((query, cands, ["python"] * k))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=3, help="interleaved runs of each side")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        counter = TokenCounter(str(build_tiny_model(Path(tmp) / "tiny")))
        table = rows(args.rows)

        def one_by_one() -> list[int]:
            return [counter.prompt_tokens(q, c, lang) for q, c, lang in table]

        def batched() -> list[int]:
            return counter.prompt_tokens_many(table)

        def render_only() -> int:
            return sum(len(counter.prompt_texts(q, c, lang)) for q, c, lang in table)

        counts = batched()
        if counts != one_by_one():
            raise SystemExit("batched and one-by-one counts differ: not timing unlike things")
        print(
            f"prompt-length cap on {len(table):,} rows ({2 * len(table):,} prompts, "
            f"{statistics.median(counts):,.0f} tokens median): same count for every row"
        )
        times: dict[str, list[float]] = {"one_by_one": [], "batched": [], "render": []}
        sides = [("one_by_one", one_by_one), ("batched", batched), ("render", render_only)]
        for rep in range(args.repeats):
            for name, fn in sides if rep % 2 == 0 else sides[::-1]:
                t = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t)
        med = {k: statistics.median(v) for k, v in times.items()}
        for name, label in (
            ("one_by_one", "one tokenizer call per row"),
            ("batched", "batched (256 texts a call)"),
            ("render", "rendering alone (both sides)"),
        ):
            runs = ", ".join(f"{x:.2f}" for x in times[name])
            print(f"  {label:<30} median {med[name]:6.2f}s ({runs})")
        tok_one = med["one_by_one"] - med["render"]
        tok_batch = med["batched"] - med["render"]
        print(f"  ratio one-by-one / batched, whole cap: {med['one_by_one'] / med['batched']:.2f}x")
        if tok_batch > 0:
            print(
                f"  ratio on the tokenizer's share (rendering subtracted): {tok_one / tok_batch:.2f}x"
            )


if __name__ == "__main__":
    main()
