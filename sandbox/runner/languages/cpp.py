"""C++: g++ C++17 -O2, with bits/stdc++.h precompiled in the image for exactly these flags."""

from __future__ import annotations

import glob
import subprocess
import sys

from . import Language, SelfTest


def find_header() -> str | None:
    """bits/stdc++.h, where the image's (and the host's) g++ finds it."""
    found = sorted(glob.glob("/usr/include/x86_64-linux-gnu/c++/*/bits/stdc++.h")) or sorted(
        glob.glob("/usr/include/*/c++/*/bits/stdc++.h")
    )
    return found[-1] if found else None


class Cpp(Language):
    name = "cpp"
    source_name = "solution.cpp"
    compiler = ("g++",)
    # The precompiled header is only used when the flags match these: keep them in this one place.
    flags = ("-std=c++17", "-O2", "-pipe")
    options = ("-fmax-errors=20", "-w")
    compile_tail = ("{source}", "-o", "solution")
    run = ("{dir}/solution",)
    memory_errors = (b"bad_alloc", b"memory exhausted")
    tools = ("g++",)
    version = ("g++", "-dumpfullversion")
    selftest = SelfTest(
        "#include <bits/stdc++.h>\nusing namespace std;\nint main(){long long a,b;cin>>a>>b;cout<<a+b<<endl;}\n",
        "2 3\n",
        "5",
    )

    def prepare_image(self) -> None:
        """Write stdc++.h.gch next to the header, where g++ looks first."""
        header = find_header()
        if header is None:
            raise SystemExit("bits/stdc++.h not found")
        argv = ["g++", *self.flags, "-x", "c++-header", header, "-o", header + ".gch"]
        subprocess.run(argv, check=True)
        print("precompiled", header + ".gch", file=sys.stderr)


LANGUAGE = Cpp()
