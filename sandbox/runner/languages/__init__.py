"""The languages the runner judges: one module of this package per language (stdlib only: the
runner runs with the image's python3 -I -S), each holding `LANGUAGE`, a `Language`.

A language is values: the file its source goes in, its compiler and flags, how a test runs,
what it prints when out of memory, the tools it needs, how to read its toolchain's version, and
a tiny self-test program with its expected output (judged when a pool starts: it proves the
toolchain works). The steps (`build`, `command`) are written once here from those values; a
language overrides one only where it differs (Python checks syntax instead of compiling, Java
names its file after the public class). Adding a language is adding one file here: `load()`
imports every module of the package and refuses one that declares no `LANGUAGE`.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import shutil
import subprocess
from dataclasses import dataclass

DIAGNOSTICS_BYTES = 8000


@dataclass(frozen=True)
class SelfTest:
    """A program that reads `stdin` and must print `expected`: judged when a pool starts."""

    source: str
    stdin: str
    expected: str


def compile_step(argv: list[str], cwd: str, run_limited, limits, tool: str) -> tuple[bool, str]:
    """Run a compiler under limits: (ok, its last DIAGNOSTICS_BYTES of output plus why it failed,
    if it did). Every compiled language and the testlib checkers go through here."""
    out = run_limited(argv, cwd=cwd, limits=limits, merge_stderr=True)
    text = out.stdout[-DIAGNOSTICS_BYTES:].decode("utf-8", "replace")
    # A compiler killed at its CPU limit shows as a signal with cpu_s at the limit.
    if out.timed_out or ((out.exit_code or 0) < 0 and out.cpu_s >= limits.cpu_s):
        return False, text + "\ncompilation exceeded its time limit"
    if out.output_exceeded:
        return False, text + "\ncompiler output exceeded its limit"
    if out.exit_code != 0:
        return False, text or f"{tool} exited with {out.exit_code}"
    return True, text


def write_source(path: str, source: str) -> None:
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
        f.write(source)


class Language:
    """One language, declared by the class attributes below; a module subclasses it, sets them,
    and exports an instance as `LANGUAGE`.

    Templates (`compile_tail`, `run`, `run_function`) are argv whose parts may name `{dir}`
    (the build folder), `{source}` (the source's file name), `{memory_mb}`, `{test}` (function
    mode's test file) and what `run_fields` adds (Java: `{main}`)."""

    name: str = ""  # the requests' `language`
    source_name: str = ""  # the file the source is written to, in the build folder
    compiler: tuple[str, ...] = ()  # the compiler's argv before its flags; () = no compile step
    flags: tuple[str, ...] = ()  # flags a precompiled artefact must match (C++: the header's)
    options: tuple[str, ...] = ()  # more compile flags (diagnostics), then a request's own
    compile_tail: tuple[str, ...] = ()  # the compile argv after the flags
    run: tuple[str, ...] = ()  # a test's argv
    run_function: tuple[str, ...] = ()  # a function-mode test's argv; () = as `run`
    memory_errors: tuple[bytes, ...] = ()  # what stderr shows when the program ran out of memory
    address_space: bool = True  # RLIMIT_AS is the memory limit (False: the JVM bounds its own)
    tools: tuple[str, ...] = ()  # executables it needs on PATH (a host without them refuses it)
    version: tuple[str, ...] = ()  # argv printing the toolchain's version
    version_stream: str = "stdout"  # where it prints it
    version_pattern: str = r"(\S+)"  # the version, the pattern's first group
    selftest: SelfTest

    def check(self) -> None:
        """The declaration is whole: a module that forgot a value fails at load, not mid-judge."""
        missing = [
            key
            for key in ("name", "source_name", "run", "tools", "version")
            if not getattr(self, key)
        ]
        if missing or not isinstance(getattr(self, "selftest", None), SelfTest):
            raise TypeError(
                f"language {self.name or type(self).__name__}: no {missing or 'selftest'}"
            )

    # -- the steps, from the values ------------------------------------------------------------

    def key(self) -> list:
        """What a build's cache key holds of the language (with the source and extra flags)."""
        return [self.name, list(self.compiler), self.compile_flags(), list(self.options),
                list(self.compile_tail), list(self.run)]  # fmt: skip

    def source_file(self, source: str) -> str:
        return self.source_name

    def compile_flags(self) -> list[str]:
        return list(self.flags)

    def build(self, source, build_dir, run_limited, limits, extra_flags=()) -> tuple[bool, str]:
        """Write the source into `build_dir` and compile it there under `limits`:
        (ok, diagnostics)."""
        name = self.source_file(source)
        write_source(os.path.join(build_dir, name), source)
        if not self.compiler:  # an interpreted language: the source is the program
            return True, ""
        tail = _fill(self.compile_tail, dir=build_dir, source=name)
        argv = [*self.compiler, *self.compile_flags(), *self.options, *extra_flags, *tail]
        return compile_step(argv, build_dir, run_limited, limits, self.compiler[0])

    def run_fields(self, build_dir: str) -> dict[str, str]:
        return {}

    def command(
        self, build_dir: str, memory_mb: int, mode: str, test_path: str | None
    ) -> list[str]:
        """A test's argv (function mode: the runner appends the token's descriptor)."""
        template = self.run_function if mode == "function" and self.run_function else self.run
        fields = {"dir": build_dir, "source": self.source_name, "memory_mb": memory_mb}
        return _fill(template, test=test_path, **fields, **self.run_fields(build_dir))

    def address_space_mb(self, memory_mb: int) -> int | None:
        return memory_mb if self.address_space else None

    def is_memory_error(self, stderr_tail: bytes) -> bool:
        return any(mark in stderr_tail for mark in self.memory_errors)

    def read_version(self, env: dict | None = None) -> str | None:
        """The toolchain's version as `version` prints it; None when a tool is not on PATH."""
        path = (env or os.environ).get("PATH")
        if any(shutil.which(tool, path=path) is None for tool in self.tools):
            return None
        try:
            p = subprocess.run(
                list(self.version),
                capture_output=True,
                text=True,
                timeout=120,
                env=env,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            return "error: " + str(e)
        text = (p.stderr if self.version_stream == "stderr" else p.stdout) or p.stdout or p.stderr
        lines = text.strip().splitlines()
        if not lines:
            return f"error: no output (exit {p.returncode})"
        found = re.search(self.version_pattern, lines[0])
        return found.group(1) if found else lines[0].strip()

    def prepare_image(self) -> None:
        """Run once when the image is built (C++: the precompiled header)."""


def _fill(template, **fields) -> list[str]:
    return [part.format(**fields) for part in template]


def load() -> dict[str, Language]:
    """Every language of this package by name: each module's `LANGUAGE`, checked whole."""
    found: dict[str, Language] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        language = getattr(module, "LANGUAGE", None)
        if not isinstance(language, Language):
            raise TypeError(f"{module.__name__} declares no LANGUAGE (a Language)")
        language.check()
        if language.name in found:
            raise TypeError(f"two languages named {language.name!r}")
        found[language.name] = language
    return found
