"""`python -m sandbox ...`: run one candidate, judge a batch file, manage the image."""
# ruff: noqa: B008  (typer declares options as argument defaults)

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError

from sandbox.engines import LOCAL_ENGINES
from sandbox.help_style import plain_flags
from sandbox.models import LANGUAGES, JudgeRequest, JudgeResult, TestCase

plain_flags()  # no `<bool>` beside each on/off flag

app = typer.Typer(
    help="Aletheia's execution sandbox: judge programs on the docker, process or http engine.",
    no_args_is_help=True,
    add_completion=False,
)
image_app = typer.Typer(help="The sandbox image.", no_args_is_help=True)
app.add_typer(image_app, name="image")
testlib_app = typer.Typer(
    help="testlib.h for testlib checkers: one file for the image and the process engine.",
    no_args_is_help=True,
)
app.add_typer(testlib_app, name="testlib")

REQUEST_FIELDS = set(JudgeRequest.model_fields)


def _fail(msg: str, code: int = 2) -> None:
    typer.echo(f"error: {msg}", err=True)
    raise typer.Exit(code)


def _read_jsonl(path: Path) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                _fail(f"{path}:{lineno}: not valid JSON: {exc}")
    return rows


def _read_rows(path: Path) -> list[dict]:
    if not path.exists():
        _fail(f"{path} does not exist")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    return _read_jsonl(path)


def _write_rows(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), tmp)
    else:
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    tmp.replace(path)  # never leave a half-written output behind


# `sandbox run`'s options by the request field they fill: an error names what the user typed
# (a bad --compare read "field mode: ...", the name of no option of the command).
RUN_OPTIONS = {
    ("language",): "--language",
    ("mode",): "--mode",
    ("time_limit_s",): "--time-limit",
    ("memory_limit_mb",): "--memory-limit-mb",
    ("compare", "mode"): "--compare",
    ("compare", "abs_tol"): "--abs-tol",
    ("compare", "rel_tol"): "--rel-tol",
    ("compare", "checker"): "--checker",
}


def _closest(error: Any) -> str:
    """`; did you mean 'testlib'?` for a value near one of a Literal's choices."""
    if error.get("type") != "literal_error" or not isinstance(error.get("input"), str):
        return ""
    choices = re.findall(r"'([^']*)'", str(error.get("ctx", {}).get("expected", "")))
    near = difflib.get_close_matches(error["input"], choices, n=1, cutoff=0.6)
    return f"; did you mean {near[0]!r}?" if near else ""


def _describe(exc: ValidationError, options: dict[tuple[str, ...], str] | None = None) -> str:
    parts = []
    for e in exc.errors():
        loc = tuple(str(p) for p in e["loc"])
        where = (options or {}).get(loc) or f"field {'.'.join(loc) or '(row)'}"
        parts.append(f"{where}: {e['msg']}{_closest(e)}")
    return "; ".join(parts)


ENGINE_HELP = (
    "docker (containers; the default where Docker runs), process (bubblewrap sandboxes on this "
    "host: no Docker needed) or http (a `python -m sandbox serve` elsewhere: --url)"
)
URL_HELP = "http engine: a server URL (repeat for several; they are tried in turn)"
TOKEN_HELP = "http engine: a file whose first line is the token (default: $ALETHEIA_SANDBOX_TOKEN)"


def _open(
    engine: str,
    pool_size: int | None,
    cache: bool,
    cache_path: Path | None,
    selftest: bool = True,
    url: list[str] | None = None,
    token_file: Path | None = None,
):
    """Open the chosen engine, or exit 3 with its one-line reason."""
    from sandbox.engines import ENGINES, EngineUnavailable, open_engine
    from sandbox.pool import SandboxError

    errors: tuple[type[BaseException], ...] = (SandboxError, EngineUnavailable)
    if engine == "docker":  # docker-py only where Docker is used (a GPU node may lack it)
        from sandbox.image import ImageError

        errors += (ImageError,)

    if engine not in ENGINES:
        _fail(f"--engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    options: dict[str, Any] = {"cache": cache}
    if engine == "http":
        if not url:
            _fail("--engine http needs --url (a `python -m sandbox serve` address)")
        # The standard library only: a missing token is one line before httpx loads.
        from sandbox.http.versions import read_token, token_of

        options["url"] = list(url)
    else:
        options.update(pool_size=pool_size, cache_path=cache_path, selftest=selftest)
    try:
        if engine == "http":
            options["token"] = token_of(read_token(str(token_file) if token_file else None))
        return open_engine(engine, **options)
    except errors as exc:
        _fail(str(exc), code=3)
        raise  # unreachable


@app.command()
def run(
    language: str = typer.Option(..., help=f"{', '.join(LANGUAGES[:-1])} or {LANGUAGES[-1]}"),
    source: Path = typer.Option(..., help="the program's source file"),
    tests: Path = typer.Option(
        ..., help='JSONL: {"input","output"} rows (stdio) or {"code"} rows (function)'
    ),
    mode: str = typer.Option("stdio", help="stdio or function"),
    time_limit: float = typer.Option(2.0, "--time-limit", help="CPU seconds per test"),
    memory_limit_mb: int = typer.Option(256, "--memory-limit-mb", help="memory per test (MB)"),
    compare: str = typer.Option("tokens", help="tokens, exact, float, checker or testlib"),
    abs_tol: float | None = typer.Option(None, help="float compare: absolute tolerance"),
    rel_tol: float | None = typer.Option(None, help="float compare: relative tolerance"),
    checker: Path | None = typer.Option(
        None,
        help="checker source: Python for --compare checker (argv: input expected actual), C++ for --compare testlib",
    ),
    cache: bool = typer.Option(True, help="use the host verdict cache"),
    engine: str = typer.Option("docker", help=ENGINE_HELP),
    url: list[str] | None = typer.Option(None, help=URL_HELP),
    token_file: Path | None = typer.Option(None, help=TOKEN_HELP),
) -> None:
    """Judge one program; print one JSON object. Exit 0 whenever a verdict was reached."""
    if not source.exists():
        _fail(f"--source {source} does not exist")
    rows = _read_jsonl(tests) if tests.exists() else _fail(f"--tests {tests} does not exist")
    try:
        req = JudgeRequest(
            language=language,
            source=source.read_text(encoding="utf-8", errors="surrogateescape"),
            mode=mode,
            tests=[TestCase(**r) for r in rows],
            time_limit_s=time_limit,
            memory_limit_mb=memory_limit_mb,
            compare={  # validated inside the request, so an error's place is compare.<field>
                "mode": compare,
                "abs_tol": abs_tol,
                "rel_tol": rel_tol,
                "checker": checker.read_text() if checker else None,
            },
        )
    except ValidationError as exc:
        _fail(_describe(exc, RUN_OPTIONS))
    except TypeError as exc:
        _fail(f"--tests {tests}: {exc}")
    client = _open(engine, 1, cache, None, selftest=False, url=url, token_file=token_file)
    try:
        [result] = client.judge([req])
    finally:
        client.close()
    typer.echo(result.model_dump_json())
    if result.verdict == "SE":
        typer.echo(f"error: no verdict could be reached: {result.error}", err=True)
        raise typer.Exit(3)


@app.command()
def judge(
    input: Path = typer.Argument(
        ..., help="JSONL or Parquet: one candidate per row (JudgeRequest fields)"
    ),
    output: Path = typer.Argument(
        ..., help="JSONL or Parquet (by extension): one verdict row per candidate"
    ),
    pool_size: int | None = typer.Option(
        None, help="slots: containers or sandboxes (default: CPU count)"
    ),
    cache: bool = typer.Option(True, help="use the host verdict cache"),
    cache_path: Path | None = typer.Option(None, help="verdict cache SQLite file"),
    skip_invalid: bool = typer.Option(
        False, help="write invalid rows as error rows instead of stopping"
    ),
    engine: str = typer.Option("docker", help=ENGINE_HELP),
    url: list[str] | None = typer.Option(None, help=URL_HELP),
    token_file: Path | None = typer.Option(None, help=TOKEN_HELP),
) -> None:
    """Judge a batch: one verdict (AC, WA, TLE, ...) per candidate row.

    Input rows carry language, source and tests, optionally mode, time_limit_s,
    memory_limit_mb and compare; other columns (ids) are copied to the output row beside
    the verdict."""
    # No square brackets in help texts: typer's rich markup takes "[word ...]" for a style tag
    # and drops it (this docstring once read "tests, ; other columns").
    rows = _read_rows(input)
    requests: list[tuple[int, JudgeRequest]] = []
    out_rows: list[dict[str, Any] | None] = [None] * len(rows)
    errors = []
    for i, row in enumerate(rows):
        payload = {k: v for k, v in row.items() if k in REQUEST_FIELDS and v is not None}
        try:
            requests.append((i, JudgeRequest.model_validate(payload)))
        except ValidationError as exc:
            errors.append(f"row {i}: {_describe(exc)}")
            out_rows[i] = {
                **_passthrough(row),
                "verdict": None,
                "error": f"invalid row: {_describe(exc)}",
            }
    if errors and not skip_invalid:
        _fail(f"{len(errors)} invalid row(s) in {input}:\n  " + "\n  ".join(errors[:20]))
    for e in errors:
        typer.echo(f"warning: {e}", err=True)
    client = _open(engine, pool_size, cache, cache_path, url=url, token_file=token_file)
    try:
        results = client.judge([r for _, r in requests], progress=True)
    finally:
        client.close()
    for (i, _), result in zip(requests, results):
        out_rows[i] = {**_passthrough(rows[i]), **_result_row(result)}
    _write_rows(output, [r for r in out_rows if r is not None])
    counts: dict[str, int] = {}
    for r in results:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    typer.echo(
        json.dumps(
            {"rows": len(rows), "judged": len(results), "invalid": len(errors), "verdicts": counts}
        )
    )


def _passthrough(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in REQUEST_FIELDS}


def _result_row(result: JudgeResult) -> dict:
    return result.model_dump(mode="json")


@app.command()
def selftest(
    engine: str = typer.Option("docker", help=ENGINE_HELP),
    pool_size: int = typer.Option(1, help="slots to start"),
    url: list[str] | None = typer.Option(None, help=URL_HELP),
    token_file: Path | None = typer.Option(None, help=TOKEN_HELP),
) -> None:
    """Start the engine, run its self-test (every language), print what it found as JSON.

    Exit 0 when every language works, 1 when some are refused here (their reasons are printed),
    3 when the engine cannot start (one line saying why)."""
    client = _open(engine, pool_size, False, None, selftest=True, url=url, token_file=token_file)
    try:
        report: dict[str, Any] = {"engine": engine, "stamp": client.stamp}
        describe = getattr(client, "describe", None)
        if describe is not None:
            report.update(describe())
        if getattr(client, "selftest_report", None) is not None:
            report["selftest"] = client.selftest_report
        if engine == "http":
            report["server"] = getattr(client, "info", {})
        report["unavailable"] = dict(getattr(client, "unavailable", {}) or {})
    finally:
        client.close()
    typer.echo(json.dumps(report, indent=2))
    for why in report["unavailable"].values():
        typer.echo(f"warning: {why}", err=True)
    if report["unavailable"]:
        raise typer.Exit(1)


@app.command()
def serve(
    engine: str = typer.Option(
        "process", help=f"the engine to serve: {' or '.join(LOCAL_ENGINES)}"
    ),
    host: str = typer.Option("127.0.0.1", help="address to listen on (0.0.0.0: every interface)"),
    port: int = typer.Option(8765, help="port"),
    pool_size: int | None = typer.Option(None, help="slots (default: CPU count)"),
    cache: bool = typer.Option(True, help="use the verdict cache"),
    cache_path: Path | None = typer.Option(None, help="verdict cache SQLite file"),
    token_file: Path | None = typer.Option(
        None, help="a file whose first line is the token (default: $ALETHEIA_SANDBOX_TOKEN)"
    ),
    max_queue: int | None = typer.Option(
        None, help='requests admitted and not yet answered before "busy" (default 32 x slots)'
    ),
    max_batch: int = typer.Option(512, help="requests per batch"),
    max_body_mb: int = typer.Option(256, help="bytes per batch, in MB"),
    body_timeout_s: float = typer.Option(
        60, min=0.1, help="longest pause while a batch arrives; a stalled body is answered 408"
    ),
    drain_timeout_s: float = typer.Option(
        600, help="on SIGTERM: how long admitted batches may finish"
    ),
    ssl_certfile: Path | None = typer.Option(None, help="serve HTTPS with this certificate"),
    ssl_keyfile: Path | None = typer.Option(None, help="... and this key"),
) -> None:
    """Serve a judge engine over HTTP (clients: --engine http --url http://HOST:PORT).

    Every call but /v1/health needs the bearer token. Stops on SIGTERM / Ctrl-C after the
    admitted batches are answered."""
    from sandbox.engines import LOCAL_ENGINES, EngineUnavailable
    from sandbox.http.versions import read_token

    if engine not in LOCAL_ENGINES:
        _fail(f"--engine for serve must be one of {', '.join(LOCAL_ENGINES)}")
    try:
        token = read_token(str(token_file) if token_file else None)
    except EngineUnavailable as exc:
        _fail(str(exc))
        raise  # unreachable
    if not token:
        _fail("the server needs a token: set ALETHEIA_SANDBOX_TOKEN or give --token-file")
    # Opened before listening: a server that cannot judge says why at once, in one line.
    opened = _open(engine, pool_size, cache, cache_path, selftest=True)
    from sandbox.http.server import ServeLimits
    from sandbox.http.server import serve as run_server

    limits = ServeLimits(
        max_body_mb=max_body_mb,
        max_batch=max_batch,
        max_queue=max_queue,
        body_idle_s=body_timeout_s,
    )
    typer.echo(f"serving the {engine} engine on {host}:{port}", err=True)
    run_server(
        lambda: opened,
        token=token,
        host=host,
        port=port,
        limits=limits,
        drain_timeout_s=drain_timeout_s,
        ssl_certfile=str(ssl_certfile) if ssl_certfile else None,
        ssl_keyfile=str(ssl_keyfile) if ssl_keyfile else None,
    )


@image_app.command("ensure")
def image_ensure(
    builder: str = typer.Option("auto", help="auto, dockerfile or debootstrap"),
    force: bool = typer.Option(False, help="rebuild even when the tag exists"),
    testlib: Path | None = typer.Option(
        None, help="testlib.h to put in the image (offline path; default: $ALETHEIA_TESTLIB_H)"
    ),
) -> None:
    """Build the sandbox image for the current definition unless its tag already exists."""
    from sandbox.image import ImageError, ensure_image

    if builder not in ("auto", "dockerfile", "debootstrap"):
        _fail("--builder must be auto, dockerfile or debootstrap")
    try:
        typer.echo(ensure_image(builder=builder, force=force, testlib=testlib))  # type: ignore[arg-type]
    except ImageError as exc:
        _fail(str(exc), code=1)


@image_app.command("prune")
def image_prune() -> None:
    """Remove the images of earlier definitions (the current one is kept)."""
    from sandbox.image import ImageError, prune_old_images

    try:
        prune_old_images()
    except ImageError as exc:
        _fail(str(exc), code=1)


@image_app.command("info")
def image_info_cmd() -> None:
    """Print the current definition's tag and whether it is built."""
    from sandbox.image import ImageError, image_info

    try:
        typer.echo(json.dumps(image_info(), indent=2))
    except ImageError as exc:
        _fail(str(exc), code=1)


@testlib_app.command("fetch")
def testlib_fetch() -> None:
    """Download the pinned testlib.h (image/testlib.json) into the cache, checking its sha256.

    Exit 1 with one line when it cannot be had (offline: give a copy with ALETHEIA_TESTLIB_H)."""
    from sandbox.testlib import TestlibError, fetch

    try:
        typer.echo(fetch())
    except TestlibError as exc:
        _fail(f"testlib.h: {exc}", code=1)


@testlib_app.command("show")
def testlib_show() -> None:
    """Print the testlib.h both local engines use and where it came from (none: why)."""
    from sandbox.testlib import TestlibError, find, sha256

    try:
        path, origin = find()
    except TestlibError as exc:
        _fail(str(exc), code=1)
        return
    info = {"path": str(path) if path else None, "origin": origin}
    if path is not None:
        info["sha256"] = sha256(path.read_bytes())
    typer.echo(json.dumps(info, indent=2))


def register(app_: typer.Typer) -> None:
    """Mount these commands under `sandbox` in the project CLI (pipeline/cli.py)."""
    app_.add_typer(app, name="sandbox")


def main() -> None:
    app()
