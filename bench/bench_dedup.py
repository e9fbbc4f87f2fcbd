"""Near-duplicate dedup at scale: time, peak memory, and recall against exact all-pairs Jaccard.

    .venv/bin/python bench/bench_dedup.py            # 20,000 statements (~1 min on 2 cores)
    .venv/bin/python bench/bench_dedup.py --full     # 100,000 statements (~6 min)

Synthetic statements of realistic length (150-400 words, Zipf-distributed vocabulary,
shared contest boilerplate sentences), 10% of them planted near-duplicates of another
(word substitutions at a random rate of 0-12%, half with sentences reordered), so true
pairs spread across the 0.7 threshold. Everything printed as ratios measured in this
one run: our LSH pipeline against exact all-pairs Jaccard on a sample (recall), and the
default LSH candidate threshold (0.5, verified exactly at 0.7) against plain LSH at 0.7.
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import time
from pathlib import Path

import numpy as np
from scipy import sparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.splits.dedup import DedupParams, cluster_texts, shingle_sets

BOILERPLATE = [
    "The first line contains a single integer n.",
    "The first line of the input contains two integers n and m.",
    "Print the answer modulo one billion and seven.",
    "Each of the next n lines contains two integers a and b.",
    "Output a single line with the answer.",
    "If there are multiple answers, print any of them.",
    "It is guaranteed that the answer exists.",
    "The sum of n over all test cases does not exceed two hundred thousand.",
    "The first line contains the number of test cases t.",
    "For each test case print one integer.",
]
FUNCTION_WORDS = [
    "the",
    "of",
    "a",
    "to",
    "and",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "with",
    "be",
    "on",
    "by",
    "this",
    "are",
    "or",
    "an",
    "at",
    "from",
]


def make_vocab(rng: np.random.Generator, size: int) -> list[str]:
    sy = [
        "ka",
        "lo",
        "mi",
        "ne",
        "ru",
        "ta",
        "shi",
        "po",
        "de",
        "va",
        "ri",
        "zu",
        "ge",
        "bo",
        "ha",
        "xi",
    ]
    words = {"".join(rng.choice(sy, rng.integers(2, 5))) for _ in range(size * 2)}
    return sorted(words)[:size]


def make_statement(rng: np.random.Generator, vocab: np.ndarray, probs: np.ndarray) -> str:
    n_words = int(rng.integers(150, 401))
    picks = rng.choice(len(vocab), n_words, p=probs)  # one draw per statement: fast
    func = rng.integers(0, len(FUNCTION_WORDS), n_words)
    use_func = rng.random(n_words) < 0.3
    ws = [
        FUNCTION_WORDS[f] if u else vocab[p] for p, f, u in zip(picks, func, use_func, strict=True)
    ]
    sentences = [
        BOILERPLATE[b] for b in rng.choice(len(BOILERPLATE), int(rng.integers(1, 4)), replace=False)
    ]
    start = sum(len(s.split()) for s in sentences)
    while start < n_words:
        k = int(rng.integers(8, 26))
        sentences.append(" ".join(ws[start : start + k]).capitalize() + ".")
        start += k
    rng.shuffle(sentences)
    return " ".join(sentences)


def make_variant(rng: np.random.Generator, text: str, vocab: np.ndarray) -> str:
    rate = rng.uniform(0.0, 0.12)
    sentences = [s.split() for s in text.split(". ")]
    for s in sentences:
        for i in range(len(s)):
            if rng.random() < rate:
                s[i] = vocab[int(rng.integers(len(vocab)))]
    if rng.random() < 0.5:
        rng.shuffle(sentences)
    return ". ".join(" ".join(s) for s in sentences)


def corpus(n: int, seed: int) -> tuple[list[str], list[tuple[int, int]]]:
    rng = np.random.default_rng(seed)
    vocab = np.asarray(make_vocab(rng, 8000))
    ranks = np.arange(1, len(vocab) + 1)
    probs = (1 / ranks**1.05) / (1 / ranks**1.05).sum()
    n_var = n // 10
    texts = [make_statement(rng, vocab, probs) for _ in range(n - n_var)]
    planted = []
    for _ in range(n_var):
        base = int(rng.integers(0, n - n_var))
        planted.append((base, len(texts)))
        texts.append(make_variant(rng, texts[base], vocab))
    return texts, planted


def exact_pairs(shingles: list[np.ndarray], threshold: float) -> set[tuple[int, int]]:
    """All pairs with Jaccard >= threshold, exactly (sparse A @ A.T of the shingle matrix)."""
    allh = np.concatenate(shingles)
    _, cols = np.unique(allh, return_inverse=True)
    rows = np.repeat(np.arange(len(shingles)), [len(s) for s in shingles])
    a = sparse.csr_matrix((np.ones(len(cols), dtype=np.int32), (rows, cols)))
    inter = sparse.triu(a @ a.T, k=1).tocoo()
    sizes = np.asarray([len(s) for s in shingles])
    jac = inter.data / (sizes[inter.row] + sizes[inter.col] - inter.data)
    keep = jac >= threshold
    return set(zip(inter.row[keep].tolist(), inter.col[keep].tolist(), strict=True))


def _status_mb(key: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak_rss() -> bool:
    """Linux: writing 5 to clear_refs resets the peak RSS (VmHWM) to the current RSS."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_rss_mb(was_reset: bool) -> float:
    if was_reset:
        return _status_mb("VmHWM")
    return (
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    )  # lifetime peak: an upper bound


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--sample", type=int, default=4000)
    ap.add_argument("--full", action="store_true", help="100,000 statements, 8,000 sampled")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.full:
        args.n, args.sample = 100_000, 8000

    t0 = time.perf_counter()
    texts, planted = corpus(args.n, args.seed)
    words = [len(t.split()) for t in texts]
    print(
        f"corpus: {len(texts)} statements, {np.mean(words):.0f} words on average "
        f"({min(words)}-{max(words)}), {len(planted)} planted near-duplicates, "
        f"built in {time.perf_counter() - t0:.1f}s"
    )

    gc.collect()
    base_rss = _status_mb("VmRSS")
    was_reset = reset_peak_rss()
    t0 = time.perf_counter()
    ours = cluster_texts(texts, DedupParams())  # the stage's defaults: LSH 0.5, verified at 0.7
    t_ours = time.perf_counter() - t0
    peak_rss = peak_rss_mb(was_reset)
    t0 = time.perf_counter()
    plain = cluster_texts(texts, DedupParams(lsh_threshold=0.7))
    t_plain = time.perf_counter() - t0

    # Recall on a sample: every planted pair whose base is drawn, plus random other statements.
    rng = np.random.default_rng(args.seed + 1)
    pairs = [planted[i] for i in rng.permutation(len(planted))[: args.sample // 4]]
    chosen = {i for p in pairs for i in p}
    for i in rng.permutation(len(texts)).tolist():
        if len(chosen) >= args.sample:
            break
        chosen.add(i)
    sample = sorted(chosen)
    t0 = time.perf_counter()
    sh = shingle_sets([texts[i] for i in sample], DedupParams())
    truth = {(sample[a], sample[b]) for a, b in exact_pairs(sh, 0.7)}
    t_exact = time.perf_counter() - t0
    t0 = time.perf_counter()
    cluster_texts([texts[i] for i in sample], DedupParams())
    t_lsh_sample = time.perf_counter() - t0

    def recall(result) -> tuple[float, float]:
        direct = {(i, j) for i, j, _ in result.near_pairs}
        same = sum(result.cluster_of[i] == result.cluster_of[j] for i, j in truth)
        return same / max(1, len(truth)), len(truth & direct) / max(1, len(truth))

    r_ours, d_ours = recall(ours)
    r_plain, d_plain = recall(plain)
    scale = (len(texts) / len(sample)) ** 2
    print(
        f"\ndedup of {len(texts)} statements (MinHash num_perm=128, word 5-grams, Jaccard >= 0.7):"
    )
    print(f"  time                {t_ours:7.1f} s   ({len(texts) / t_ours:,.0f} statements/s)")
    print(
        f"  peak memory         {peak_rss:7.0f} MB RSS  ({peak_rss - base_rss:+.0f} MB over the {base_rss:.0f} MB held before: corpus + libraries)"
    )
    print(
        f"  candidates / found  {ours.candidate_pairs:,} LSH candidate pairs -> "
        f"{len(ours.near_pairs):,} verified near pairs, {ours.exact_pairs} exact duplicates"
    )
    print(
        f"\nrecall against exact all-pairs Jaccard on {len(sample)} sampled statements "
        f"({len(truth)} true pairs with J >= 0.7):"
    )
    print(f"  {'':32s}{'same cluster':>14s}{'pair found':>12s}{'time':>9s}")
    print(f"  {'ours (LSH 0.5 -> exact 0.7)':32s}{r_ours:14.3f}{d_ours:12.3f}{t_ours:8.1f}s")
    print(f"  {'plain LSH at 0.7':32s}{r_plain:14.3f}{d_plain:12.3f}{t_plain:8.1f}s")
    print(
        f"  ratio ours / plain: recall x{r_ours / max(r_plain, 1e-9):.3f}, time x{t_ours / t_plain:.2f}"
    )
    print(
        f"\nexact all-pairs on the sample: {t_exact:.1f} s vs LSH on the same sample {t_lsh_sample:.1f} s "
        f"(x{t_exact / t_lsh_sample:.2f}); all-pairs work grows x{scale:.0f} to the full corpus, LSH ~x{len(texts) / len(sample):.0f}"
    )
    ok = r_ours >= 0.95
    print(f"\nrecall >= 0.95 at the threshold: {'YES' if ok else 'NO'} ({r_ours:.3f})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
