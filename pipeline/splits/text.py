"""Statement text -> normalised words -> hashed word n-grams (stable across machines).

Words are NFKC-normalised, lower-cased runs of letters/digits (`_` splits: `t_i` is
`t`, `i`). Single letters are masked to one placeholder, because they are almost
always variable names (`n`, `m`, `h_i`): renaming the variables of a statement must
not hide a near-duplicate. An n-gram is hashed from the
blake2b hashes of its words with a fixed polynomial and mixer in numpy (uint64
arithmetic wraps, deterministically), so the same text gives the same hashes in
every process: Python's own `hash()` is salted per process and must not be used.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

import numpy as np

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n\s*\n")
VARIABLE = "\u00b7v"  # stands for any single letter
_P = np.uint64(0x100000001B3)  # FNV prime: any odd 64-bit multiplier works


@dataclass(frozen=True)
class Words:
    tokens: list[str]
    sentence: np.ndarray  # sentence number of each token (int32)


def words(text: str, *, mask_variables: bool = True) -> Words:
    """Lower-cased words of `text`, each tagged with the sentence it belongs to.

    mask_variables: single letters become one placeholder (near-duplicate detection);
    decontamination keeps them, as it looks for verbatim overlap.
    """
    text = unicodedata.normalize("NFKC", text).lower()
    tokens: list[str] = []
    lengths: list[int] = []
    for part in _SENTENCE_END.split(text):  # findall per sentence: much faster than finditer
        found = _WORD.findall(part)
        if found:
            tokens += found
            lengths.append(len(found))
    if mask_variables:
        tokens = [VARIABLE if len(t) == 1 and t.isalpha() else t for t in tokens]
    sentence = np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)
    return Words(tokens, sentence)


def normalized_text(text: str) -> str:
    """The text exact-duplicate detection compares: its words joined by single spaces."""
    return " ".join(words(text).tokens)


class TokenHasher:
    """Word -> stable 64-bit hash, memoised (vocabularies are small next to corpora)."""

    def __init__(self) -> None:
        self._cache: dict[str, int] = {}

    def ids(self, tokens: list[str]) -> np.ndarray:
        cache = self._cache
        vals = list(map(cache.get, tokens))
        if None in vals:
            for i, v in enumerate(vals):
                if v is None:
                    t = tokens[i]
                    v = cache.get(t)
                    if v is None:
                        v = int.from_bytes(
                            hashlib.blake2b(t.encode("utf-8"), digest_size=8).digest(), "little"
                        )
                        cache[t] = v
                    vals[i] = v
        return np.array(vals, dtype=np.uint64)


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: spreads the polynomial hash over all 64 bits."""
    h = h.copy()
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h


def window_hashes(ids: np.ndarray, n: int) -> np.ndarray:
    """Hash of every window of `n` consecutive ids (len(ids) - n + 1 of them)."""
    m = len(ids) - n + 1
    if m <= 0:
        return np.empty(0, dtype=np.uint64)
    h = np.zeros(m, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(n):
            h = h * _P + ids[k : k + m]
        return _mix(h)


def ngram_hashes(w: Words, ids: np.ndarray, n: int, *, within_sentences: bool) -> np.ndarray:
    """Sorted unique hashes of the word n-grams of a text.

    within_sentences: n-grams never cross a sentence end, so reordering sentences
    leaves the set unchanged; a sentence shorter than n counts as one n-gram. A
    text shorter than n words is one n-gram of all its words.
    """
    if len(ids) == 0:
        return np.empty(0, dtype=np.uint64)
    if len(ids) < n:
        return np.unique(window_hashes(ids, len(ids)))
    h = window_hashes(ids, n)
    if within_sentences:
        sid = w.sentence
        same = sid[: len(h)] == sid[n - 1 :]
        h = h[same]
        # sentences shorter than n words: hash the whole sentence once
        starts = np.flatnonzero(np.r_[True, sid[1:] != sid[:-1]])
        ends = np.r_[starts[1:], len(sid)]
        short = [(s, e) for s, e in zip(starts, ends, strict=True) if e - s < n]
        if short:
            extra = [window_hashes(ids[s:e], e - s)[0] for s, e in short]
            h = np.concatenate([h, np.asarray(extra, dtype=np.uint64)])
    return np.unique(h)


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Exact Jaccard of two sorted unique hash arrays."""
    if len(a) == 0 and len(b) == 0:
        return 1.0
    inter = len(np.intersect1d(a, b, assume_unique=True))
    return inter / (len(a) + len(b) - inter)
