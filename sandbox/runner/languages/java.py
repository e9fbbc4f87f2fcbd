"""Java: javac into a class dir, the file named after whatever public class the source declares.

javac starts from a class-data archive of its own classes, dumped at image build: each compile
then loads the compiler from the archive instead of parsing its classes again (measured in the
image: 0.74 -> 0.42 CPU s per compile; the class files are byte-identical, the diagnostics too).
Without the archive (the process engine, an image built otherwise) javac starts as before."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

from . import Language, SelfTest

JAVAC_FLAGS = (
    "-J-XX:+UseSerialGC",
    "-J-XX:TieredStopAtLevel=1",
    "-J-Xshare:auto",
    "-J-Xmx512m",
    "-J-XX:-UsePerfData",
    "-encoding",
    "UTF-8",
    "-nowarn",
)
RUN_FLAGS = (
    "-XX:+UseSerialGC",
    "-Xshare:auto",
    "-XX:-UsePerfData",
    "-Xss64m",
    "-XX:ActiveProcessorCount=1",
)
JAVAC_ARCHIVE = "/opt/aletheia/javac.jsa"
# What the archive is dumped from: a compile touching the library a contest program imports.
_ARCHIVE_SOURCE = """import java.io.*;
import java.math.*;
import java.util.*;
import java.util.function.*;
import java.util.stream.*;
public class Main {
    record P(long a, int b) {}
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        StringTokenizer st = new StringTokenizer(in.readLine());
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out)));
        long n = Long.parseLong(st.nextToken());
        List<P> ps = new ArrayList<>();
        Map<Long, Integer> seen = new HashMap<>();
        Deque<Integer> q = new ArrayDeque<>();
        PriorityQueue<long[]> pq = new PriorityQueue<>((x, y) -> Long.compare(x[0], y[0]));
        TreeMap<String, Set<Integer>> tm = new TreeMap<>();
        ps.add(new P(n, 1)); seen.merge(n, 1, Integer::sum); q.add(1); pq.add(new long[] {n});
        tm.computeIfAbsent("k", k -> new TreeSet<>()).add(2);
        int[] arr = IntStream.range(0, 5).map(i -> i * i).toArray();
        Arrays.sort(arr);
        String s = ps.stream().map(P::toString).collect(Collectors.joining(","));
        out.printf("%d %s %s%n", arr.length, s, BigInteger.valueOf(n).pow(2));
        out.flush();
    }
}
"""


class Java(Language):
    name = "java"
    source_name = "Main.java"  # the file is named after the public class (`source_file`)
    compiler = ("javac",)
    flags = JAVAC_FLAGS
    compile_tail = ("-d", "{dir}/classes", "{dir}/{source}")
    run = ("java", *RUN_FLAGS, "-Xmx{memory_mb}m", "-cp", "{dir}/classes", "{main}")
    memory_errors = (b"OutOfMemoryError",)
    address_space = False  # the JVM reserves far more address space than it uses: -Xmx + the cgroup
    tools = ("javac", "java")
    version = ("java", "-version")
    version_stream = "stderr"
    version_pattern = r'"([^"]+)"'  # openjdk version "17.0.15" 2025-04-15
    selftest = SelfTest(
        (
            "import java.util.*;\nclass Sol { public static void main(String[] a){Scanner s=new Scanner(System.in);"
            "System.out.println(s.nextLong()+s.nextLong());}}\n"
        ),
        "2 3\n",
        "5",
    )

    def source_file(self, source: str) -> str:
        return names(source)[0] + ".java"

    def compile_flags(self) -> list[str]:
        if os.path.exists(JAVAC_ARCHIVE):
            return [*JAVAC_FLAGS, f"-J-XX:SharedArchiveFile={JAVAC_ARCHIVE}"]
        return list(JAVAC_FLAGS)

    def build(self, source, build_dir, run_limited, limits, extra_flags=()) -> tuple[bool, str]:
        os.makedirs(os.path.join(build_dir, "classes"), exist_ok=True)
        with open(os.path.join(build_dir, "main_class"), "w") as f:
            f.write(names(source)[1])
        return super().build(source, build_dir, run_limited, limits, extra_flags)

    def run_fields(self, build_dir: str) -> dict[str, str]:
        with open(os.path.join(build_dir, "main_class")) as f:
            return {"main": f.read().strip()}

    def prepare_image(self) -> None:
        """Dump javac's class-data archive, with the flags compiles use."""
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "Main.java")
            with open(src, "w") as f:
                f.write(_ARCHIVE_SOURCE)
            dump = f"-J-XX:ArchiveClassesAtExit={JAVAC_ARCHIVE}"
            subprocess.run(["javac", *JAVAC_FLAGS, dump, "-d", tmp, src], check=True)
        print("archived javac classes in", JAVAC_ARCHIVE, file=sys.stderr)


_NOISE = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"\"\".*?\"\"\"|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])+'", re.DOTALL
)
_PUBLIC = re.compile(
    r"\bpublic\s+(?:(?:final|abstract|strictfp|sealed)\s+)*(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)"
)
_CLASS = re.compile(r"\b(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)")
_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.MULTILINE)
_MAIN = re.compile(r"\bvoid\s+main\s*\(\s*(?:final\s+)?String\s*(?:\[\s*\]|\.\.\.)")


def _strip(source: str) -> str:
    """Blank out comments, strings and char literals (same length, so positions stay valid)."""
    return _NOISE.sub(lambda m: " " * len(m.group(0)), source)


def _class_spans(code: str) -> list[tuple[str, int, int]]:
    """(name, body start, body end) of every class-like declaration, by brace matching."""
    spans = []
    for m in _CLASS.finditer(code):
        if code[max(0, m.start() - 1)] == ".":  # Foo.class
            continue
        start = code.find("{", m.end())
        if start < 0:
            continue
        depth, end = 0, len(code)
        for i in range(start, len(code)):
            if code[i] == "{":
                depth += 1
            elif code[i] == "}":
                depth -= 1
                if depth == 0:
                    end = i
                    break
        spans.append((m.group(1), start, end))
    return spans


def names(source: str) -> tuple[str, str]:
    """(file stem, main class): the public top-level class names the file; the main class is the
    innermost class whose body declares main(String[]) (nested ones as Outer$Inner), else the
    public class, else Main."""
    code = _strip(source)
    public = _PUBLIC.search(code)
    stem = public.group(1) if public else "Main"
    spans = _class_spans(code)
    main_cls = None
    for main_at in _MAIN.finditer(code):
        chain = [name for name, start, end in spans if start < main_at.start() < end]
        if chain:
            main_cls = "$".join(chain)  # spans are in source order: outermost first
            if len(chain) == 1:
                break  # prefer a top-level class's main
    if main_cls is None:
        main_cls = public.group(1) if public else "Main"
    package = _PACKAGE.search(code)
    if package:
        main_cls = package.group(1) + "." + main_cls
    return stem, main_cls


LANGUAGE = Java()
