"""Near-duplicate clusters: MinHash LSH over word 5-grams, verified by exact Jaccard.

1. Exact duplicates: the same normalised word sequence.
2. Near duplicates: datasketch MinHash LSH proposes candidate pairs at a lower
   threshold (`lsh_threshold`, so pairs near the real threshold are not missed by
   the banding), and each candidate pair is kept only if its exact Jaccard over the
   n-gram sets is >= `threshold` (so the LSH adds no false merges).
3. Clusters are the connected components (union-find) of both kinds of pair, so
   near-duplicates of near-duplicates end up together: no chain can cross splits.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # datasketch pulls in scipy and redis (3 s on a busy machine): imported
    from datasketch import MinHash  # where it hashes, not by every `aletheia` preflight

from pipeline.splits.text import TokenHasher, Words, jaccard, ngram_hashes, words

_MASK32 = 0xFFFFFFFF


@dataclass
class DedupParams:
    shingle_size: int = 5
    threshold: float = 0.7
    lsh_threshold: float = 0.5
    num_perm: int = 128
    within_sentences: bool = True
    minhash_seed: int = 1


@dataclass
class DedupResult:
    cluster_of: list[int]  # document index -> representative document index of its cluster
    exact_pairs: int = 0
    candidate_pairs: int = 0
    near_pairs: list[tuple[int, int, float]] = field(default_factory=list)  # verified (i, j, J)


class UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:  # path compression
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:  # smaller index is the root: deterministic representatives
            self.parent[max(ra, rb)] = min(ra, rb)


def shingle_sets(texts: Sequence[str], params: DedupParams) -> list[np.ndarray]:
    return _shingle_sets([words(t) for t in texts], params)


def _shingle_sets(docs: Sequence[Words], params: DedupParams) -> list[np.ndarray]:
    hasher = TokenHasher()
    return [
        ngram_hashes(
            w, hasher.ids(w.tokens), params.shingle_size, within_sentences=params.within_sentences
        )
        for w in docs
    ]


def minhashes(shingles: Sequence[np.ndarray], params: DedupParams) -> Iterator[MinHash]:
    from datasketch import MinHash

    # Shingles are already 64-bit hashes; datasketch's default scheme takes 32-bit values.
    return MinHash.generator(
        ((s & np.uint64(_MASK32)).tolist() for s in shingles),
        num_perm=params.num_perm,
        seed=params.minhash_seed,
        hashfunc=lambda v: v,
    )


def cluster_texts(
    texts: Sequence[str],
    params: DedupParams,
    *,
    on_progress: Callable[[str, int], None] | None = None,
) -> DedupResult:
    """Cluster documents; returns each document's cluster representative (its smallest index)."""
    n = len(texts)
    tick = on_progress or (lambda stage, k: None)
    uf = UnionFind(n)
    result = DedupResult(cluster_of=[])

    # 1. exact duplicates after normalisation, and each text's shingle set (its words are
    # dropped right away: millions of small str objects would dominate peak memory)
    first_with: dict[bytes, int] = {}
    hasher = TokenHasher()
    shingles: list[np.ndarray] = []
    for i, t in enumerate(texts):
        w = words(t)
        key = hashlib.blake2b(" ".join(w.tokens).encode("utf-8"), digest_size=16).digest()
        j = first_with.setdefault(key, i)
        if j != i:
            uf.union(i, j)
            result.exact_pairs += 1
        shingles.append(
            ngram_hashes(
                w,
                hasher.ids(w.tokens),
                params.shingle_size,
                within_sentences=params.within_sentences,
            )
        )
        tick("shingles", 1)

    # 2. MinHash LSH candidates, verified by exact Jaccard
    # One pass: each signature queries the earlier ones, then joins the index (no second
    # pass, and signatures need not be kept).
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=params.lsh_threshold, num_perm=params.num_perm)
    for i, sig in enumerate(minhashes(shingles, params)):
        tick("minhash", 1)
        if not len(shingles[i]):
            tick("query", 1)
            continue
        for j in sorted(lsh.query(sig)):
            result.candidate_pairs += 1
            score = jaccard(shingles[j], shingles[i])
            if score >= params.threshold:
                result.near_pairs.append((j, i, score))
                uf.union(j, i)
        lsh.insert(i, sig)
        tick("query", 1)
    result.cluster_of = [uf.find(i) for i in range(n)]
    return result


def clusters_from(cluster_of: Sequence[int]) -> dict[int, list[int]]:
    members: dict[int, list[int]] = defaultdict(list)
    for i, root in enumerate(cluster_of):
        members[root].append(i)
    return dict(members)


@dataclass(frozen=True)
class CrossLink:
    """A `right` document in the same near-duplicate cluster as a `left` one."""

    right: int  # index into the right-hand texts
    left: int  # index into the left-hand texts: the first left member of that cluster
    jaccard: float  # exact shingle Jaccard of the two (below threshold when linked by a chain)


def links_across(left: Sequence[str], right: Sequence[str], params: DedupParams) -> list[CrossLink]:
    """Right documents whose cluster (the split stage's definition) holds a left document.

    Both sides are clustered together exactly as `cluster_texts` clusters a split's
    input, so a chain of near-duplicates that crosses the two sides is found too.
    Texts with no words cannot be compared and are left out, as the split stage does.
    """
    usable = [
        (s, i)
        for s, texts in (("L", left), ("R", right))
        for i, t in enumerate(texts)
        if words(t).tokens
    ]
    docs = [left[i] if s == "L" else right[i] for s, i in usable]
    cluster_of = cluster_texts(docs, params).cluster_of
    first_left: dict[int, int] = {}
    for k, (side, i) in enumerate(usable):
        if side == "L":
            first_left.setdefault(cluster_of[k], i)
    links = []
    for k, (side, i) in enumerate(usable):
        j = first_left.get(cluster_of[k]) if side == "R" else None
        if j is not None:
            a, b = shingle_sets([left[j], right[i]], params)
            links.append(CrossLink(right=i, left=j, jaccard=jaccard(a, b)))
    return links
