"""The bundled starter problem set shipped in `data/bundled/` (the demo's embedded default).

Each problem is one folder `data/bundled/<slug>/` holding:

- `problem.yaml`: title, statement (markdown), time_limit_s, memory_limit_mb, difficulty,
  tags, compare_mode (tokens | exact | float | checker), float tolerances, license;
- `tests.json` (a list of `{"input", "output"}`) or `tests/<name>.in` + `tests/<name>.out`;
- `solutions/`: `correct.{py,cpp,java}` (one per language) and `wrong_*.{py,cpp,java}`
  (plausible incorrect programs; they become `reference` candidates downstream).

Folders whose name starts with `_` (such as `_tools/`, the test generator) are not problems.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from schemas.ids import problem_id_for
from schemas.problem import Problem, Solution, TestCase

DEFAULT_BUNDLED_DIR = Path(__file__).resolve().parents[2] / "data" / "bundled"
SOURCE = "bundled"

LANGUAGE_BY_SUFFIX = {".py": "python", ".cpp": "cpp", ".java": "java"}
_YAML_KEYS = {
    "title", "statement", "time_limit_s", "memory_limit_mb", "difficulty", "tags",
    "compare_mode", "float_abs_tol", "float_rel_tol", "checker", "license",
}  # fmt: skip


class BundledProblemError(ValueError):
    """A bundled problem folder is malformed; the message names the folder and the file."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def problem_dirs(root: Path | None = None) -> list[Path]:
    """The problem folders under `root`, sorted by slug."""
    root = Path(root) if root is not None else DEFAULT_BUNDLED_DIR
    if not root.is_dir():
        raise BundledProblemError(root, "bundled problem directory does not exist")
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def bundled_solution_files(root: Path | None = None) -> list[tuple[str, str, Path, bool]]:
    """Every reference solution as `(problem_id, language, path, correct)`, sorted by path."""
    rows = []
    for pdir in problem_dirs(root):
        pid = problem_id_for(SOURCE, pdir.name)
        for path, language, correct in _solution_paths(pdir):
            rows.append((pid, language, path, correct))
    return rows


def load_bundled(root: Path | None = None) -> list[Problem]:
    """Every bundled problem as a `schemas.Problem` (source "bundled"), sorted by slug."""
    return [load_problem_dir(pdir) for pdir in problem_dirs(root)]


def load_problem_dir(pdir: Path) -> Problem:
    meta = _read_meta(pdir / "problem.yaml")
    checker = None
    if meta.get("checker"):
        checker_path = pdir / str(meta["checker"])
        if not checker_path.is_file():
            raise BundledProblemError(
                pdir / "problem.yaml", f"checker file {checker_path.name!r} not found"
            )
        checker = checker_path.read_text(encoding="utf-8")
    solutions = [
        Solution(language=language, code=path.read_text(encoding="utf-8"), correct=correct)
        for path, language, correct in _solution_paths(pdir)
    ]
    statement = meta["statement"]
    try:
        return Problem(
            problem_id=problem_id_for(SOURCE, pdir.name),
            source=SOURCE,
            source_id=pdir.name,
            title=meta["title"],
            statement=statement,
            prompt_statement=statement,
            test_mode="stdio",
            tests=_read_tests(pdir),
            time_limit_s=float(meta.get("time_limit_s", 2.0)),
            memory_limit_mb=int(meta.get("memory_limit_mb", 256)),
            compare_mode=meta.get("compare_mode", "tokens"),
            float_abs_tol=meta.get("float_abs_tol"),
            float_rel_tol=meta.get("float_rel_tol"),
            checker=checker,
            contest_date=None,
            difficulty=meta.get("difficulty"),
            tags=list(meta.get("tags") or []),
            solutions=solutions,
            license=meta.get("license"),
        )
    except ValidationError as exc:
        raise BundledProblemError(pdir, f"does not form a valid Problem: {exc}") from exc


def _read_meta(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise BundledProblemError(path, "missing problem.yaml")
    try:
        meta = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise BundledProblemError(path, f"invalid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise BundledProblemError(path, "expected a mapping at the top level")
    unknown = sorted(set(meta) - _YAML_KEYS)
    if unknown:
        raise BundledProblemError(path, f"unknown keys {unknown}; allowed: {sorted(_YAML_KEYS)}")
    for key in ("title", "statement"):
        if not isinstance(meta.get(key), str) or not meta[key].strip():
            raise BundledProblemError(path, f"field {key!r} must be a non-empty string")
    return meta


def _read_tests(pdir: Path) -> list[TestCase]:
    json_path, tests_dir = pdir / "tests.json", pdir / "tests"
    if json_path.is_file():
        try:
            raw = json.loads(json_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise BundledProblemError(json_path, f"invalid JSON: {exc}") from exc
        if not isinstance(raw, list) or not raw:
            raise BundledProblemError(json_path, "expected a non-empty list of {input, output}")
        tests = []
        for i, t in enumerate(raw):
            if (
                not isinstance(t, dict)
                or not isinstance(t.get("input"), str)
                or not isinstance(t.get("output"), str)
            ):
                raise BundledProblemError(
                    json_path, f"test {i}: needs string fields 'input' and 'output'"
                )
            tests.append(TestCase(input=t["input"], output=t["output"]))
        return tests
    if tests_dir.is_dir():
        tests = []
        for inp in sorted(tests_dir.glob("*.in")):
            out = inp.with_suffix(".out")
            if not out.is_file():
                raise BundledProblemError(inp, f"no matching expected output {out.name}")
            tests.append(
                TestCase(
                    input=inp.read_text(encoding="utf-8"), output=out.read_text(encoding="utf-8")
                )
            )
        if tests:
            return tests
    raise BundledProblemError(pdir, "no tests: expected tests.json or tests/*.in with *.out")


def _solution_paths(pdir: Path) -> list[tuple[Path, str, bool]]:
    sol_dir = pdir / "solutions"
    if not sol_dir.is_dir():
        raise BundledProblemError(sol_dir, "missing solutions/ folder")
    rows = []
    for path in sorted(sol_dir.iterdir()):
        language = LANGUAGE_BY_SUFFIX.get(path.suffix)
        if language is None or not path.is_file():
            raise BundledProblemError(
                path, f"not a solution file; expected one of {sorted(LANGUAGE_BY_SUFFIX)}"
            )
        if path.stem == "correct":
            correct = True
        elif path.stem.startswith("wrong_"):
            correct = False
        else:
            raise BundledProblemError(
                path, "solution files are named correct.<ext> or wrong_<what>.<ext>"
            )
        rows.append((path, language, correct))
    return rows
