"""The runner's languages (sandbox/runner/languages/): one module of values each, on one
interface, with a self-test program and version discovery; a language is added by adding one
file (checked end to end: a file dropped into the real image's languages folder is judged)."""

from __future__ import annotations

import inspect
import json
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from sandbox.runner import languages
from sandbox.runner.languages import Language, SelfTest

# A whole language in one file: values only (an interpreted language needs no method).
SHELL_LANGUAGE = """
from . import Language, SelfTest


class Shell(Language):
    name = "shell"
    source_name = "solution.sh"
    run = ("bash", "{dir}/{source}")
    tools = ("bash",)
    version = ("bash", "--version")
    version_pattern = r"version (\\S+)"
    selftest = SelfTest("read a b\\necho $((a + b))\\n", "2 3\\n", "5")


LANGUAGE = Shell()
"""


def test_every_language_is_declared_on_one_interface() -> None:
    from sandbox.models import LANGUAGES

    found = languages.load()
    assert set(found) == {"cpp", "java", "python"} and tuple(found) == LANGUAGES
    build = inspect.signature(Language.build)
    for name, language in found.items():
        assert isinstance(language, Language) and language.name == name
        assert isinstance(language.selftest, SelfTest) and language.selftest.expected
        # one signature for every language's build: Python's takes the extra flags too
        assert inspect.signature(type(language).build) == build, name
    assert found["cpp"].command("/b", 64, "stdio", None) == ["/b/solution"]
    assert found["python"].command("/b", 64, "stdio", None) == ["python3", "/b/solution.py"]
    assert found["java"].address_space_mb(256) is None and found["cpp"].address_space_mb(256) == 256


def test_a_module_without_a_language_is_refused(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "langs_copy"
    shutil.copytree(Path(languages.__file__).parent, package)
    (package / "notes.py").write_text("WHAT = 'no LANGUAGE here'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    copy = importlib.import_module("langs_copy")
    with pytest.raises(TypeError, match="langs_copy.notes declares no LANGUAGE"):
        copy.load()
    (package / "notes.py").unlink()
    (package / "shell.py").write_text(SHELL_LANGUAGE)
    assert set(copy.load()) == {"cpp", "java", "python", "shell"}


def test_versions_are_read_as_each_language_declares() -> None:
    for name, language in languages.load().items():
        if all(shutil.which(tool) for tool in language.tools):
            version = language.read_version()
            assert version and re.fullmatch(r"\d+(\.\d+)+\S*", version), (name, version)

    class Missing(Language):
        tools = ("no-such-toolchain-here",)
        version = ("no-such-toolchain-here", "--version")

    assert Missing().read_version() is None


@pytest.mark.docker
def test_one_file_adds_a_language_to_the_image(tmp_path: Path) -> None:
    """The real image, its languages folder plus one file: the runner's self-test judges the new
    language (and reports every language's version), and a request in it gets its verdicts."""
    from sandbox.container import ContainerSpec, docker_run_argv
    from sandbox.image import ensure_image

    shell = tmp_path / "shell.py"
    shell.write_text(SHELL_LANGUAGE)
    shell.chmod(0o644)
    argv = docker_run_argv(
        ContainerSpec(ensure_image()), f"aletheia-lang-{uuid.uuid4().hex[:8]}", 1000
    )
    mount = ["-v", f"{shell}:/opt/aletheia/runner/languages/shell.py:ro"]
    argv = [*argv[:-1], *mount, argv[-1]]
    judge = {
        "op": "judge", "language": "shell", "mode": "stdio", "time_limit_s": 2,
        "memory_limit_mb": 256, "source": "read a b\necho $((a * b))\n",
        "tests": [{"input": "2 3\n", "output": "6"}, {"input": "2 2\n", "output": "5"}],
    }  # fmt: skip
    requests = "".join(json.dumps(r) + "\n" for r in ({"op": "selftest"}, judge))
    proc = subprocess.run(
        argv, input=requests, capture_output=True, text=True, timeout=300, check=False
    )
    selftest, judged = (json.loads(line) for line in proc.stdout.splitlines())
    assert selftest["ok"], selftest
    assert set(selftest["languages"]) == {"cpp", "java", "python", "shell"}
    for name, entry in selftest["languages"].items():
        assert entry["verdicts"] == ["AC"] and re.fullmatch(r"\d+(\.\d+)+\S*", entry["version"]), (
            name,
            entry,
        )
    assert judged["compile_ok"] and [t["verdict"] for t in judged["tests"]] == ["AC", "WA"]
