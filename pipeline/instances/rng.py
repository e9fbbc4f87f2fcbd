"""Seeded, order-free randomness: every random choice is a hash of (seed, purpose, key).

A choice never depends on row order, thread count or the polars version, so the same
config and seed give byte-identical output anywhere (invariant 5), and adding rows for
one problem does not reshuffle another.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np
import polars as pl

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def hash64(values: Iterable[str], salt: str) -> np.ndarray:
    """A stable 64-bit hash of each string (blake2b keyed by `salt`)."""
    key = hashlib.blake2b(salt.encode(), digest_size=16).digest()
    out = [
        int.from_bytes(hashlib.blake2b(v.encode(), digest_size=8, key=key).digest(), "little")
        for v in values
    ]
    return np.asarray(out, dtype=np.uint64)


def mix64(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """SplitMix64 finaliser of a combined with b: a fresh uniform 64-bit value per pair."""
    a = np.asarray(a, dtype=np.uint64)
    b = np.asarray(b, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = a ^ (b * _GOLDEN + np.uint64(0x632BE59BD9B4E019))
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


_HEX_ID = r"^[a-z]+_[0-9a-f]{15,}$"  # our ids: a prefix + a sha256 hex prefix (schemas.ids)


def hash_column(series: pl.Series, salt: str) -> pl.Series:
    """A stable 64-bit hash of each value of a string column.

    Our ids are already sha256 hex, so for them the last 60 bits are mixed with the salt
    (vectorised); any other strings are hashed with blake2b once per distinct value.
    """
    if series.len() and series.str.contains(_HEX_ID).all():
        bits = series.str.slice(-15).str.to_integer(base=16).cast(pl.UInt64).to_numpy()
        return pl.Series(series.name, mix64(bits, purpose_salt(0, salt)), dtype=pl.UInt64)
    uniq = series.unique().sort()
    mapping = pl.DataFrame(
        {"_k": uniq, "_h": pl.Series(hash64(uniq.to_list(), salt), dtype=pl.UInt64)}
    )
    return (
        pl.DataFrame({"_k": series})
        .join(mapping, on="_k", how="left", maintain_order="left")
        .get_column("_h")
        .alias(series.name)
    )


def purpose_salt(seed: int, *parts: str) -> int:
    """A 64-bit constant for one use of the RNG (seed + purpose), to mix into row hashes."""
    digest = hashlib.blake2b("\x00".join([str(seed), *parts]).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")
