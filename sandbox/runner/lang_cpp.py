"""C++ executor: g++ C++17 -O2 with bits/stdc++.h precompiled in the image for exactly these flags."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

from compiler import compile_step

LANG = "cpp"
# The precompiled header is only used when the flags match these: keep them in this one place.
FLAGS = ["-std=c++17", "-O2", "-pipe"]
EXTRA = ["-fmax-errors=20", "-w"]
SOURCE_NAME = "solution.cpp"
BINARY = "solution"
SELFTEST = (
    "#include <bits/stdc++.h>\nusing namespace std;\nint main(){long long a,b;cin>>a>>b;cout<<a+b<<endl;}\n",
    "2 3\n",
    "5",
)


def header_path() -> str:
    found = sorted(glob.glob("/usr/include/x86_64-linux-gnu/c++/*/bits/stdc++.h")) or sorted(
        glob.glob("/usr/include/*/c++/*/bits/stdc++.h")
    )
    if not found:
        raise SystemExit("bits/stdc++.h not found")
    return found[-1]


def build_pch() -> None:
    """Run at image build time: writes stdc++.h.gch next to the header, where g++ looks first."""
    header = header_path()
    subprocess.run(["g++", *FLAGS, "-x", "c++-header", header, "-o", header + ".gch"], check=True)
    print("precompiled", header + ".gch", file=sys.stderr)


def build(source: str, build_dir: str, run_limited, limits, extra_flags=()) -> tuple[bool, str]:
    with open(
        os.path.join(build_dir, SOURCE_NAME), "w", encoding="utf-8", errors="surrogatepass"
    ) as f:
        f.write(source)
    argv = ["g++", *FLAGS, *EXTRA, *extra_flags, SOURCE_NAME, "-o", BINARY]
    return compile_step(argv, build_dir, run_limited, limits, "g++")


def command(build_dir: str, memory_mb: int, mode: str, test_path: str | None) -> list[str]:
    return [os.path.join(build_dir, BINARY)]


def address_space_mb(memory_mb: int) -> int | None:
    return memory_mb


def is_memory_error(stderr_tail: bytes) -> bool:
    return b"bad_alloc" in stderr_tail or b"memory exhausted" in stderr_tail


if __name__ == "__main__" and sys.argv[1:] == ["--build-pch"]:
    build_pch()
