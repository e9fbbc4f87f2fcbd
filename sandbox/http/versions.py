"""The servers' /v1/version: what the http engine and its probe both ask first (stdlib only).

`gather` asks each server through a `fetch(url) -> (status, body)` of the caller's (httpx in the
engine; `http.client` in `probe`, which answers a dead server without importing httpx) and sorts
what came back: a refused token, another protocol or servers of different engines are
EngineUnavailable; a server that does not answer is set aside; none answering is
EngineUnavailable too (the engine cannot run: a permanent error, which the flows never retry).
"""

from __future__ import annotations

import http.client
import json
import os
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from sandbox.engines import EngineProbe, EngineUnavailable

PROTOCOL = 1
TOKEN_ENV = "ALETHEIA_SANDBOX_TOKEN"
NO_TOKEN = (
    f"the http engine needs the servers' token: --token-file FILE (its first line), or ${TOKEN_ENV}"
)


class NoAnswer(Exception):
    """A server that did not answer /v1/version usefully (down, a timeout, a 5xx): one line."""


def urls_of(url: str | list[str] | tuple[str, ...]) -> list[str]:
    urls = [url] if isinstance(url, str) else list(url)
    if not urls:
        raise EngineUnavailable("the http engine needs at least one server url (--url)")
    return [u.rstrip("/") for u in urls]


def token_of(token: str | None) -> str:
    token = token if token is not None else os.environ.get(TOKEN_ENV, "")
    if not token:
        raise EngineUnavailable(NO_TOKEN)
    return token


def read_token(token_file: str | None) -> str:
    """The token: a file's first line, else $ALETHEIA_SANDBOX_TOKEN (never a command-line
    argument: others on the machine can read those). A file that cannot be read, or whose first
    line is empty, is EngineUnavailable (one line); no file and no variable is ""."""
    if not token_file:
        return os.environ.get(TOKEN_ENV, "").strip()
    try:
        with open(token_file, encoding="utf-8") as f:
            token = f.readline().strip()
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        raise EngineUnavailable(f"sandbox token file {token_file}: {why}") from exc
    if not token:
        raise EngineUnavailable(f"sandbox token file {token_file}: its first line is empty")
    return token


def read_version(url: str, status: int, body: bytes) -> dict[str, Any]:
    """A server's answer to /v1/version, checked: its info, or why not."""
    if status == 401:
        raise EngineUnavailable(f"{url}: the token was refused")
    if status != 200:
        raise NoAnswer(f"{url}: /v1/version answered {status}")
    try:
        info = json.loads(body)
    except ValueError as exc:
        raise EngineUnavailable(f"{url}: not a sandbox server (/v1/version is not JSON)") from exc
    got = info.get("protocol") if isinstance(info, dict) else None
    if got != PROTOCOL:
        raise EngineUnavailable(f"{url}: protocol {got}, not {PROTOCOL}: update one side")
    return info


def gather(
    urls: list[str], fetch: Callable[[str], tuple[int, bytes]]
) -> tuple[dict[str, dict], list[str]]:
    """({url: info} of the servers that answered, [why each other did not])."""
    infos, errors = {}, []
    for url in urls:
        try:
            status, body = fetch(url)
            infos[url] = read_version(url, status, body)
        except NoAnswer as exc:
            errors.append(str(exc))
    if not infos:
        raise EngineUnavailable(
            f"no sandbox server answers: {'; '.join(errors)} (is `python -m sandbox serve` "
            "running there?)"
        )
    stamps = {i.get("stamp") for i in infos.values()}
    if len(stamps) > 1:
        raise EngineUnavailable(
            "the sandbox servers run different engines (their verdicts would mix): "
            + "; ".join(f"{u}: {i.get('stamp')}" for u, i in infos.items())
        )
    return infos, errors


def _fetch_stdlib(token: str, timeout_s: float) -> Callable[[str], tuple[int, bytes]]:
    def fetch(url: str) -> tuple[int, bytes]:
        parts = urlsplit(url)
        kind = (
            http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        )
        conn = kind(parts.hostname or "", parts.port, timeout=timeout_s)
        try:
            conn.request(
                "GET", parts.path + "/v1/version", headers={"Authorization": f"Bearer {token}"}
            )
            resp = conn.getresponse()
            return resp.status, resp.read()
        except (OSError, http.client.HTTPException) as exc:
            why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            raise NoAnswer(f"{url}: {type(exc).__name__}: {why}") from exc
        finally:
            conn.close()

    return fetch


def probe(
    url: str | list[str] | tuple[str, ...],
    token: str | None = None,
    *,
    connect_timeout_s: float = 3.0,
    **_engine_options: Any,
) -> EngineProbe:
    """`probe_engine("http", ...)`: every server's /v1/version with the token, in a few seconds.
    Servers that do not answer while another does are notes; the languages refused are those
    the servers refuse."""
    urls = urls_of(url)
    infos, errors = gather(urls, _fetch_stdlib(token_of(token), connect_timeout_s))
    notes = [f"{why}; judging goes to the other servers" for why in errors]
    unavailable: dict[str, str] = {}
    for info in infos.values():
        unavailable.update(info.get("unavailable") or {})
    return EngineProbe("http", unavailable, notes)
