"""Edits that provably leave a program's behaviour as it was: no re-judge needed.

A bias edit that adds or changes comments (or only moves layout where layout is not
syntax) gives the compiler or interpreter the same program: for Python the same syntax
tree (Python's own parser, `ast`, positions aside), for C++ and Java the same token
stream without comments (tree-sitter, literals compared whole). What can still tell the
two sources apart is the program looking at itself: its line numbers (`__LINE__`,
`f_lineno`, a stack trace printed to stdout), its own source file, or code it builds at
run time. So an edit is proven unchanged only when, besides the equal syntax, the
program names nothing of that kind (the deny lists below, checked on every name the
program uses) and the edit adds no text a compiler would read differently from
tree-sitter (a Python coding line, a Java `\\u` escape, a C++ line splice).

Such an edit keeps its original's verdict and pass rate without a sandbox run (counted
as `carried_unchanged`); every other edit is judged again (invariant 4,
docs/adversarial.md). The test suite's programs that print their own line number are
exactly what the deny lists keep in the re-judge.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache

from pipeline.instances.adversarial.syntax import code_stream, has_error, tokens


def _names(*groups: str) -> frozenset[str]:
    return frozenset(word for group in groups for word in group.split())


# Names through which a program can see its own lines, stack, source file or process,
# or run code it builds (which could do any of those). Checked on every name the program
# uses: identifiers, attribute names and imported modules.
_PY_DENY = _names(
    # line numbers, frames, tracebacks
    "inspect traceback linecache tokenize dis faulthandler pdb _getframe f_lineno "
    "tb_lineno lineno f_code f_back f_globals f_locals f_lasti tb_frame tb_next tb_lasti "
    "gi_frame cr_frame ag_frame __code__ co_firstlineno co_lines co_lnotab co_linetable "
    "co_positions __traceback__ exc_info exception last_traceback last_exc excepthook "
    "settrace setprofile logging warnings stderr __stderr__",
    # the program's own source file
    "__file__ __loader__ __spec__ __cached__ argv orig_argv executable getsource pathlib "
    "Path FileIO read_text read_bytes listdir scandir walk glob",
    # code built or reached at run time
    "eval exec compile __import__ importlib getattr __getattribute__ globals locals vars "
    "__builtins__ builtins __dict__ modules ast runpy site gc ctypes breakpoint",
    # other processes
    "subprocess system popen spawnl spawnv execv execve execl execlp execvp fork multiprocessing",
)
_CPP_DENY = _names(
    "__LINE__ __FILE__ __FILE_NAME__ __BASE_FILE__ __builtin_LINE __builtin_FILE "
    "__builtin_COLUMN source_location stacktrace basic_stacktrace backtrace "
    "backtrace_symbols dladdr __DATE__ __TIME__ __TIMESTAMP__ fopen freopen open openat "
    "ifstream ofstream fstream filebuf filesystem readlink popen system execv execve "
    "execl execlp execvp fork syscall dlopen",
)
_JAVA_DENY = _names(
    "getStackTrace StackWalker StackTraceElement getLineNumber printStackTrace File "
    "FileReader FileInputStream Files Paths Path RandomAccessFile FileSystems getResource "
    "getResourceAsStream ProcessBuilder Runtime ClassLoader getProtectionDomain "
    "getCodeSource MethodHandles reflect",
)
_CODING = re.compile(r"^[ \t\f]*#.*?coding[:=]")


def _py_names(tree: ast.AST) -> set[str] | None:
    """Every name a Python program uses, or None when it opens a file by name: `open(...)`
    is allowed only on a file descriptor number (`open(0)`, the competitive-programming
    idiom for stdin), never on a path, which could be its own source."""
    fd_opens = {
        id(n.func)
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and n.args
        and isinstance(n.args[0], ast.Constant)
        and type(n.args[0].value) is int
    }
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id == "open" and id(node) not in fd_opens:
                return None
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            if node.attr == "open":
                return None  # os.open, io.open, Path.open: by name
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.update(node.name.split("."))
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.update(node.module.split("."))
    return names


def _python_unchanged(before: str, after: str) -> bool:
    try:
        a, b = ast.parse(before), ast.parse(after)
    except (SyntaxError, ValueError):  # not a program our parser reads: judge it
        return False
    if ast.dump(a) != ast.dump(b):  # positions aside: comments and layout only
        return False
    # A coding line is a comment that changes how the bytes are read.
    if any(_CODING.match(line) for line in after.split("\n")[:2] + before.split("\n")[:2]):
        return False
    names = _py_names(a)
    return names is not None and not names & _PY_DENY


def _stream_unchanged(language: str, before: str, after: str) -> bool:
    if has_error(language, before) or has_error(language, after):
        return False  # tree-sitter's tokens are only trusted on a clean parse
    if code_stream(language, before) != code_stream(language, after):
        return False
    if language == "java" and "\\u" in after:
        return False  # javac decodes \uXXXX before it sees comments: one could end a line
    if language == "cpp" and (re.search(r"\\[ \t]*\r?\n", after) or "??/" in after):
        return False  # a line splice (or its trigraph) can pull code into a comment
    deny = _CPP_DENY if language == "cpp" else _JAVA_DENY
    # Every word of every token but comments: names, macro bodies, #include targets and
    # string literals too (conservative: a literal "open" also sends the edit to the judge).
    used = {w for t in tokens(language, before) for w in re.findall(r"\w+", t.text)}
    return not used & deny


@lru_cache(maxsize=4096)
def provably_unchanged(language: str, before: str, after: str) -> bool:
    """True when `after` is `before` with only comments or non-syntactic layout changed and
    the program cannot observe the difference (see the module docstring); False means
    "not proven", and the edit is judged again."""
    if before == after:
        return True
    try:
        after.encode("utf-8")  # the sandbox writes the source as UTF-8
    except UnicodeEncodeError:
        return False
    if language == "python":
        return _python_unchanged(before, after)
    if language in ("cpp", "java"):
        return _stream_unchanged(language, before, after)
    return False
