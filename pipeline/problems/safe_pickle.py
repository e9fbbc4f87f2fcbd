"""A pickle loader that refuses everything but plain str / list / dict / numbers.

LiveCodeBench ships some private tests as base64(zlib(pickle(json text))). Unpickling
untrusted data can run arbitrary code through `find_class` (any importable callable);
builtin strings, lists, dicts, numbers, bools and None need no class lookup at all,
so refusing every lookup leaves exactly the data types and nothing executable.
"""

from __future__ import annotations

import base64
import binascii
import io
import pickle
import zlib
from typing import Any


class UnsafePickleError(pickle.UnpicklingError):
    """The payload asks for a class or callable: refused, never executed."""


class _DataOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise UnsafePickleError(f"refused to load {module}.{name}: only str/list/dict data allowed")

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafePickleError("refused persistent id in pickle")


_ALLOWED = (str, list, dict, int, float, bool, type(None))


def _check(value: Any) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _check(k)
            _check(v)
    elif isinstance(value, list):
        for v in value:
            _check(v)
    elif not isinstance(value, _ALLOWED):
        raise UnsafePickleError(f"refused pickled value of type {type(value).__name__}")


def safe_loads(data: bytes) -> Any:
    """Unpickle `data` only if it is built from builtin data types."""
    value = _DataOnlyUnpickler(io.BytesIO(data)).load()
    _check(value)  # tuples/sets/bytes need no find_class either; keep to JSON-like data
    return value


def decode_b64_zlib_pickle(text: str) -> Any:
    """base64 -> zlib -> restricted pickle. Raises ValueError with the failing step named."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=False)
    except (binascii.Error, UnicodeEncodeError) as e:
        raise ValueError(f"not base64: {e}") from e
    try:
        inflated = zlib.decompress(raw)
    except zlib.error as e:
        raise ValueError(f"not zlib data: {e}") from e
    try:
        return safe_loads(inflated)
    except UnsafePickleError:
        raise
    except Exception as e:
        raise ValueError(f"not a pickle: {e}") from e
