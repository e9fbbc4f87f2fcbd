"""Whether a model reference can be had, checked before torch and transformers are imported.

`--model out/demo/train/dpo/fianl` used to fail 15 seconds in, deep inside the Hub client,
with "Repo id must be in the form 'repo_name' or 'namespace/repo_name'". A reference that
reads as a path and does not exist is a one-line error here, with the nearest existing
name. One that reads as a Hub id must be in the local Hugging Face cache or, unless the Hub
is off (`HF_HUB_OFFLINE`), answered for by the Hub (one HEAD request, a few seconds at most,
never a download): `aletheia assemble` once spent 50 s on twelve retries of an uncached
tokenizer before a 140-line traceback. A model served over HTTP (an OpenAI-compatible
server: `vllm serve`, SGLang) must be listed by the server's `GET /v1/models`: an
evaluation against a closed port once printed nothing for 86 s, then a traceback.
"""

from __future__ import annotations

import http.client
import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from pipeline.errors import Unavailable, UserError, clip, near_path

MODEL_FILES = ("config.json", "adapter_config.json")  # full weights, or a LoRA adapter
# What makes a tokenizer in the cache or on the Hub (a model's config.json for older repos).
TOKENIZER_FILES = ("tokenizer_config.json", "config.json")
# One probe's budget: a live server or the Hub answers in milliseconds; a dead one refuses
# at once, and a black-holed address is given up on after this.
PROBE_TIMEOUT_S = 3.0


class ModelUnavailable(Unavailable):
    """A model, tokenizer or model server a run needs cannot be had here (not cached, no Hub,
    no server: exit 3): one line naming the config key (or option), the reference and what to
    do."""


class NotAModel(UserError):
    """A local path named as a model is no model (a file, a folder without config.json, no
    such path): a config mistake (exit 2), one line naming the key."""


def looks_like_path(ref: str) -> bool:
    """A filesystem path rather than a Hub id (`namespace/name` or `name`)."""
    if ref.startswith(("/", ".", "~")) or ref.count("/") > 1 or "\\" in ref:
        return True
    head = ref.split("/", 1)[0]
    return "/" in ref and Path(head).is_dir()  # `out/final` where ./out exists


def hub_offline() -> bool:
    """HF_HUB_OFFLINE, from the environment or as huggingface_hub read it (a test may set
    the constant alone)."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"}:
        return True
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def in_hf_cache(ref: str, files: tuple[str, ...] = ("config.json",)) -> bool:
    """Whether one of `files` of the Hub id `ref` is in the local HF cache (no network)."""
    from huggingface_hub import try_to_load_from_cache

    for name in files:
        try:
            if isinstance(try_to_load_from_cache(ref, name), str):
                return True
        except Exception:  # noqa: BLE001 - a malformed id is simply not cached
            return False
    return False


# Endpoints that did not answer in this process, with why: the next model is not asked again.
_UNREACHABLE: dict[str, str] = {}


def _hub_endpoint() -> str:
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def hub_problem(ref: str, file: str = "config.json") -> str | None:
    """Why the Hub will not give `file` of the model `ref` now (None: it will). One HEAD
    request with the user's token, no redirect followed, nothing downloaded."""
    from huggingface_hub import get_token

    endpoint = _hub_endpoint()
    if endpoint in _UNREACHABLE:  # asked once per process: not a timeout per model
        return _UNREACHABLE[endpoint]
    token = get_token()
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        status, _ = _http("HEAD", f"{endpoint}/{ref}/resolve/main/{file}", headers)
    except OSError as e:
        _UNREACHABLE[endpoint] = f"the Hub at {endpoint} cannot be reached ({_reason(e)})"
        return _UNREACHABLE[endpoint]
    if status < 400:
        return None
    if status in (401, 403):
        return (
            f"the Hub at {endpoint} refuses it (HTTP {status}: gated, private or misspelt; "
            "log in with `hf auth login` and accept its licence on its Hub page)"
        )
    if status == 404:
        return f"the Hub at {endpoint} has no {file} for it (HTTP 404: no such model?)"
    return f"the Hub at {endpoint} answers HTTP {status}"


def hub_availability(ref: str, files: tuple[str, ...] = ("config.json",)) -> tuple[str, str]:
    """(where `ref` comes from, '') or ('', why not): a local folder, the HF cache, or the
    Hub (asked only when online and `ref` is not cached)."""
    if Path(ref).expanduser().exists():
        return "local folder", ""
    if looks_like_path(ref):
        return "", f"no such path{near_path(ref)}"
    if in_hf_cache(ref, files):
        return "HF cache", ""
    if hub_offline():
        return "", "not in the local HF cache, and HF_HUB_OFFLINE is set"
    why = hub_problem(ref, files[0])
    return ("", f"not in the local HF cache, and {why}") if why else ("the Hub", "")


def download_hint(ref: str) -> str:
    return f"download it first (hf download {ref}) or give a local folder"


def require_model(ref: str | Path, where: str) -> None:
    """Raise NotAModel naming `where` (an option or a config key) for a missing path or a
    folder without a model, ModelUnavailable for a Hub id neither cached nor on the Hub."""
    text = str(ref)
    path = Path(text).expanduser()
    if path.is_file():
        raise NotAModel(f"{where}: {text} is a file; give the model's folder (with config.json)")
    if path.is_dir():
        if not any((path / f).is_file() for f in MODEL_FILES):
            inside = _model_subfolders(path)
            hint = f"; models inside it: {', '.join(inside)}" if inside else ""
            raise NotAModel(f"{where}: {text} holds no config.json, so it is not a model{hint}")
        return
    if looks_like_path(text):
        raise NotAModel(
            f"{where}: no such path {text}{near_path(path)}; give a model folder "
            "(config.json inside) or a Hub id namespace/name"
        )
    _, why = hub_availability(text, MODEL_FILES[:1])
    if why:
        raise ModelUnavailable(f"{where}: {text} is {why}; {download_hint(text)}")


def _model_subfolders(folder: Path) -> list[str]:
    """Subfolders (one or two levels down) that hold a model: what the user likely meant."""
    found = []
    for depth in ("*", "*/*"):
        for sub in sorted(folder.glob(depth)):
            if sub.is_dir() and any((sub / f).is_file() for f in MODEL_FILES):
                found.append(str(sub))
    return found[:5]


# --- models served over HTTP ----------------------------------------------------------------


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the redirect's status is the answer: the file is there


def _http(method: str, url: str, headers: dict[str, str]) -> tuple[int, bytes]:
    """(status, body) of one request, redirects not followed, within PROBE_TIMEOUT_S; an
    OSError when nothing (or nothing speaking HTTP) answers. The standard library's client:
    no HTTP stack to import (a tenth of a second or more on a loaded machine) for one
    request."""
    request = urllib.request.Request(url, method=method, headers=headers)
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=PROBE_TIMEOUT_S) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:  # an answer all the same (4xx, 5xx, a redirect)
        return e.code, e.read()
    except http.client.HTTPException as e:  # something answers, but not in HTTP
        raise OSError(f"no HTTP answer: {type(e).__name__}") from e


def _reason(e: OSError) -> str:
    """Why nothing answered, in a few words: the OS's reason (`Connection refused`, `Name or
    service not known`) or what is left (`timed out`)."""
    reason = e.reason if isinstance(e, urllib.error.URLError) else e
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return clip(" ".join(str(reason).split()) or type(e).__name__, 120)


def models_url(base_url: str) -> str:
    """The model list of an OpenAI-compatible server whose base URL is `base_url` (with or
    without its `/v1`, as the backend takes it)."""
    base = base_url.rstrip("/")
    return (base if base.endswith("/v1") else base + "/v1") + "/models"


def served_problem(base_url: str, model: str, api_key: str | None = None) -> str | None:
    """Why the server at `base_url` will not answer for `model` (None: it lists it): nothing
    answers, it refuses the key, it is no OpenAI-compatible server, or it serves others."""
    url = models_url(base_url)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        status, body = _http("GET", url, headers)
    except OSError as e:
        return f"no model server answers ({_reason(e)})"
    if status in (401, 403):
        return f"the server refuses the key (HTTP {status} on GET /v1/models)"
    try:
        ids = [str(m["id"]) for m in json.loads(body)["data"]] if status == 200 else None
    except (ValueError, KeyError, TypeError):
        ids = None
    if ids is None:
        return (
            f"GET {url} answers HTTP {status} without a model list: "
            "not an OpenAI-compatible server?"
        )
    if model in ids or model.rstrip("/") in ids:
        return None
    more = f" and {len(ids) - 5} more" if len(ids) > 5 else ""
    shown = ", ".join(repr(i) for i in ids[:5]) + more
    return f"the server serves {shown or 'no model'}, not {model!r}"


def require_served(where: str, base_url: str, model: str, api_key_env: str | None = None) -> None:
    """Raise a ModelUnavailable, one line naming `where` (the config key or option) and the
    URL, unless the server at `base_url` answers and lists `model`."""
    api_key = os.environ.get(api_key_env) if api_key_env else None
    why = served_problem(base_url, model, api_key)
    if why:
        raise ModelUnavailable(served_message(where, base_url, model, why))


def served_message(where: str, base_url: str, model: str, why: str) -> str:
    """The one line for a server that will not answer for `model`, with what to do."""
    if why.startswith("no model server answers"):
        todo = f"start it (vllm serve {model} ...) or fix the URL"
    elif why.startswith("the server serves"):
        todo = "serve it under that name (vllm serve --served-model-name) or fix the model name"
    else:
        todo = "check the URL and the key"
    return f"{where} {base_url}: {why}; {todo}"


def model_files(ref: str | Path) -> list[Path]:
    """What a stage's key hashes of a model: a local folder's top-level files, sorted (its
    weights, config and tokenizer); a Hub id, none (its name is in the stage's call)."""
    folder = Path(ref).expanduser()
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file())
