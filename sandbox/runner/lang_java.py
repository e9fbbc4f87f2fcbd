"""Java executor: javac into a class dir named after whatever public class the source declares."""

from __future__ import annotations

import os
import re

LANG = "java"
JAVAC_FLAGS = [
    "-J-XX:+UseSerialGC",
    "-J-XX:TieredStopAtLevel=1",
    "-J-Xshare:auto",
    "-J-Xmx512m",
    "-J-XX:-UsePerfData",
    "-encoding",
    "UTF-8",
    "-nowarn",
]
RUN_FLAGS = [
    "-XX:+UseSerialGC",
    "-Xshare:auto",
    "-XX:-UsePerfData",
    "-Xss64m",
    "-XX:ActiveProcessorCount=1",
]
FLAGS = JAVAC_FLAGS + RUN_FLAGS
SELFTEST = (
    (
        "import java.util.*;\nclass Sol { public static void main(String[] a){Scanner s=new Scanner(System.in);"
        "System.out.println(s.nextLong()+s.nextLong());}}\n"
    ),
    "2 3\n",
    "5",
)
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"", re.DOTALL)
_PUBLIC = re.compile(
    r"\bpublic\s+(?:(?:final|abstract|strictfp)\s+)*(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)"
)
_CLASS = re.compile(r"\b(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)")
_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.MULTILINE)
_MAIN = re.compile(
    r"\bstatic\s+(?:final\s+)?(?:public\s+)?void\s+main\s*\(|\bpublic\s+static\s+void\s+main\s*\("
)


def _strip(source: str) -> str:
    return _COMMENTS.sub(
        lambda m: " " * len(m.group(0)) if not m.group(0).startswith('"') else '""', source
    )


def names(source: str) -> tuple[str, str]:
    """(file stem, main class): the public class names the file; main is the class owning main()."""
    code = _strip(source)
    public = _PUBLIC.search(code)
    stem = public.group(1) if public else "Main"
    main_at = _MAIN.search(code)
    main_cls = None
    if main_at:
        owners = [m for m in _CLASS.finditer(code) if m.start() < main_at.start()]
        if owners:
            main_cls = owners[-1].group(1)
    if main_cls is None:
        main_cls = public.group(1) if public else "Main"
    package = _PACKAGE.search(code)
    if package:
        main_cls = package.group(1) + "." + main_cls
    return stem, main_cls


def build(source: str, build_dir: str, run_limited, limits) -> tuple[bool, str]:
    stem, main_cls = names(source)
    src = os.path.join(build_dir, stem + ".java")
    with open(src, "w", encoding="utf-8", errors="surrogatepass") as f:
        f.write(source)
    classes = os.path.join(build_dir, "classes")
    os.makedirs(classes, exist_ok=True)
    with open(os.path.join(build_dir, "main_class"), "w") as f:
        f.write(main_cls)
    out = run_limited(
        ["javac", *JAVAC_FLAGS, "-d", classes, src], cwd=build_dir, limits=limits, merge_stderr=True
    )
    text = out.stdout[-8000:].decode("utf-8", "replace")
    if out.timed_out:
        return False, text + "\ncompilation exceeded its time limit"
    if out.exit_code != 0:
        return False, text or f"javac exited with {out.exit_code}"
    return True, text


def command(build_dir: str, memory_mb: int, mode: str, test_path: str | None) -> list[str]:
    with open(os.path.join(build_dir, "main_class")) as f:
        main_cls = f.read().strip()
    return [
        "java",
        *RUN_FLAGS,
        f"-Xmx{memory_mb}m",
        "-cp",
        os.path.join(build_dir, "classes"),
        main_cls,
    ]


def address_space_mb(memory_mb: int) -> int | None:
    return None  # the JVM reserves far more address space than it uses: -Xmx + the cgroup bound it


def is_memory_error(stderr_tail: bytes) -> bool:
    return b"OutOfMemoryError" in stderr_tail
