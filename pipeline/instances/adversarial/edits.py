"""Semantics-preserving program edits, placed with tree-sitter (never by regex on code).

Each returns the edited program, or None where the edit does not apply (no statement to
annotate, no local variable to rename, no function body to put dead code in). Whether
an edit really preserved behaviour is decided by re-judging it, not assumed here.
"""

from __future__ import annotations

import builtins
import keyword
import random
import re
from collections.abc import Callable

from tree_sitter import Node

from pipeline.common.syntax import parse
from pipeline.instances.adversarial.syntax import COMMENT_TYPES, is_member_name, iter_tokens

COMMENT_PREFIX = {"python": "#", "cpp": "//", "java": "//"}
_PY_HEADER_SKIP = re.compile(r"^(#!|[ \t\f]*#.*?coding[:=])")


def _lines(code: str) -> list[str]:
    return code.split("\n")


# ----------------------------------------------------------------------------- comments
def insert_header(language: str, code: str, lines: list[str]) -> str:
    """Comment lines at the top (after a Python shebang / coding line, which must stay first)."""
    prefix = COMMENT_PREFIX[language]
    rows = _lines(code)
    at = 0
    if language == "python":
        while at < min(2, len(rows)) and _PY_HEADER_SKIP.match(rows[at]):
            at += 1
    header = [f"{prefix} {text}".rstrip() for text in lines]
    return "\n".join(rows[:at] + header + rows[at:])


_STATEMENTS = {
    "python": {"expression_statement", "return_statement"},
    "cpp": {"expression_statement", "return_statement", "declaration"},
    "java": {"expression_statement", "return_statement", "local_variable_declaration"},
}
_BODIES = {"block", "compound_statement", "module"}


def statement_line_ends(language: str, code: str) -> list[int]:
    """Rows holding exactly one single-line statement that ends the line (inside a body)."""
    tree = parse(code, language)
    rows = _lines(code)
    raw = code.encode("utf-8")
    line_starts = [0]
    for i, b in enumerate(raw):
        if b == 10:
            line_starts.append(i + 1)
    found: set[int] = set()
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        stack.extend(n.children)
        if n.type not in _STATEMENTS[language] or n.has_error:
            continue
        if n.parent is None or n.parent.type not in _BODIES:
            continue
        r0, r1 = n.start_point[0], n.end_point[0]
        if r0 != r1:
            continue
        line_end = line_starts[r1 + 1] - 1 if r1 + 1 < len(line_starts) else len(raw)
        rest = raw[n.end_byte : line_end].decode("utf-8", "replace")
        if rest.strip() == "" and not rows[r1].rstrip().endswith("\\"):
            found.add(r1)
    return sorted(found)


def annotate_lines(
    language: str, code: str, comments: list[str], rng: random.Random, max_lines: int = 2
) -> str | None:
    """End-of-line comments on up to `max_lines` statement lines chosen by `rng`."""
    candidates = statement_line_ends(language, code)
    if not candidates:
        return None
    chosen = sorted(rng.sample(candidates, min(max_lines, len(candidates))))
    rows = _lines(code)
    prefix = COMMENT_PREFIX[language]
    for row in chosen:
        rows[row] = f"{rows[row].rstrip()}  {prefix} {rng.choice(comments)}"
    return "\n".join(rows)


# ----------------------------------------------------------------------------- renaming
def _field(node: Node, name: str) -> Node | None:
    return node.child_by_field_name(name)


def _identifiers_under(node: Node | None) -> list[Node]:
    if node is None:
        return []
    if node.type == "identifier":
        return [node]
    out: list[Node] = []
    for c in node.children:
        if c.type in (
            "identifier",
            "pattern_list",
            "tuple_pattern",
            "list_pattern",
            "list_splat_pattern",
        ):
            out += _identifiers_under(c)
    return out


def _declarator_name(node: Node | None) -> Node | None:
    """The identifier a C++ declarator declares (through pointers, references, arrays)."""
    while node is not None and node.type != "identifier":
        if node.type in (
            "pointer_declarator",
            "reference_declarator",
            "array_declarator",
            "init_declarator",
        ):
            node = _field(node, "declarator") or (
                node.named_children[0] if node.named_children else None
            )
        else:
            return None
    return node


def _inside(node: Node, types: set[str]) -> bool:
    p = node.parent
    while p is not None:
        if p.type in types:
            return True
        p = p.parent
    return False


def _all_nodes(root: Node) -> list[Node]:
    out, stack = [], [root]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(n.children)
    return out


def _python_locals(root: Node) -> tuple[set[str], set[str]]:
    declared: set[str] = set()
    blocked: set[str] = set(dir(builtins)) | set(keyword.kwlist) | {"self", "cls", "_"}
    for n in _all_nodes(root):
        t = n.type
        if t == "assignment" and not _in_class_body(n) or t in ("for_statement", "for_in_clause"):
            declared |= {i.text.decode() for i in _identifiers_under(_field(n, "left"))}
        elif t in ("function_definition", "class_definition"):
            if (name := _field(n, "name")) is not None:
                blocked.add(name.text.decode())
        elif t in (
            "import_statement",
            "import_from_statement",
            "global_statement",
            "nonlocal_statement",
        ):
            blocked |= {i.text.decode() for i in _all_nodes(n) if i.type == "identifier"}
        elif t == "keyword_argument" and (name := _field(n, "name")) is not None:
            blocked.add(name.text.decode())
        elif t == "attribute" and (attr := _field(n, "attribute")) is not None:
            blocked.add(attr.text.decode())
    return declared, blocked


def _in_class_body(n: Node) -> bool:
    p = n.parent
    while p is not None and p.type not in ("function_definition", "class_definition"):
        p = p.parent
    return p is not None and p.type == "class_definition"


def _cpp_locals(root: Node) -> tuple[set[str], set[str]]:
    declared: set[str] = set()
    blocked: set[str] = {"main"}
    for n in _all_nodes(root):
        t = n.type
        targets: list[Node | None] = []
        if t == "declaration" and _inside(n, {"compound_statement"}):
            targets = n.children_by_field_name("declarator")
        elif (
            t == "parameter_declaration"
            and _inside(n, {"function_definition", "lambda_expression"})
            or t == "for_range_loop"
        ):
            targets = [_field(n, "declarator")]
        elif t == "function_declarator":
            blocked.add((_field(n, "declarator") or n).text.decode())
        elif (
            t == "call_expression"
            and (fn := _field(n, "function")) is not None
            and fn.type == "identifier"
        ):
            blocked.add(fn.text.decode())
        elif t.startswith("preproc_") and t != "preproc_include":
            # macro bodies are raw text to the grammar: names used there are left alone
            blocked |= set(re.findall(r"[A-Za-z_]\w*", n.text.decode("utf-8", "replace")))
        for d in targets:
            name = _declarator_name(d)
            if name is not None:
                declared.add(name.text.decode())
    return declared, blocked


def _java_locals(root: Node) -> tuple[set[str], set[str]]:
    declared: set[str] = set()
    blocked: set[str] = set()
    for n in _all_nodes(root):
        t = n.type
        if t == "variable_declarator" and n.parent is not None:
            target = declared if n.parent.type == "local_variable_declaration" else blocked
            if (name := _field(n, "name")) is not None:
                target.add(name.text.decode())
        elif t in ("formal_parameter", "catch_formal_parameter", "enhanced_for_statement"):
            if (name := _field(n, "name")) is not None:
                declared.add(name.text.decode())
        elif (
            t
            in (
                "method_declaration",
                "class_declaration",
                "constructor_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
            )
            and (name := _field(n, "name")) is not None
        ):
            blocked.add(name.text.decode())
    return declared, blocked


_LOCALS = {"python": _python_locals, "cpp": _cpp_locals, "java": _java_locals}


def rename_locals(
    language: str, code: str, namer: Callable[[str], str], protected: set[str] = frozenset()
) -> str | None:  # type: ignore[assignment]
    """Rename local variables consistently with `namer(old) -> new`; None if none qualify.

    New names are checked to be fresh (not any identifier or keyword already in the program).
    """
    tree = parse(code, language)
    declared, blocked = _LOCALS[language](tree.root_node)
    names = sorted(declared - blocked - set(protected))
    if not names:
        return None
    taken = {n.text.decode() for n in iter_tokens(tree.root_node) if n.text is not None}
    taken |= set(keyword.kwlist) | set(dir(builtins))
    mapping: dict[str, str] = {}
    for old in names:
        new, k = namer(old), 2
        base = new
        while new in taken:
            new, k = f"{base}{k}", k + 1
        taken.add(new)
        mapping[old] = new
    raw = code.encode("utf-8")
    edits = [
        (n.start_byte, n.end_byte, mapping[n.text.decode()])
        for n in _all_nodes(tree.root_node)
        if n.type == "identifier"
        and n.text is not None
        and n.text.decode() in mapping
        and not is_member_name(n, language)
        and not _inside(n, COMMENT_TYPES)
    ]
    for start, end, new in sorted(edits, reverse=True):
        raw = raw[:start] + new.encode() + raw[end:]
    return raw.decode("utf-8")


# ----------------------------------------------------------------------------- dead code
def _function_body(root: Node, language: str) -> Node | None:
    """`main`'s body where there is one, else the first function's body."""
    kinds = {"cpp": "function_definition", "java": "method_declaration"}[language]
    first = None
    for n in sorted(_all_nodes(root), key=lambda x: x.start_byte):
        if n.type != kinds:
            continue
        body = _field(n, "body")
        if body is None:
            continue
        if language == "cpp":
            decl = _field(n, "declarator")
            name = _field(decl, "declarator") if decl is not None else None
        else:
            name = _field(n, "name")
        if name is not None and name.text == b"main":
            return body
        first = first or body
    return first


def insert_dead_code(language: str, code: str, lines: dict[str, list[str]]) -> str | None:
    """An unreachable block (`if False:` / `if (false) {...}`) holding `lines[language]`.

    Python: at the end of the module. C++ / Java: first thing in main's body (or the first
    function's), so it is inside code that runs yet can never execute.
    """
    body_lines = lines[language]
    if language == "python":
        block = "if False:\n" + "".join(f"    {ln}\n" for ln in body_lines)
        return code.rstrip("\n") + "\n\n" + block
    tree = parse(code, language)
    body = _function_body(tree.root_node, language)
    if body is None or body.child_count == 0 or body.children[0].type != "{":
        return None
    open_brace = body.children[0]
    indent = "    "
    if len(body.children) > 1:
        first = body.children[1]
        line = code.encode("utf-8")[: first.start_byte].split(b"\n")[-1].decode("utf-8", "replace")
        indent = line if line.strip() == "" else indent
    block = f"\n{indent}if (false) {{ " + " ".join(body_lines) + " }"
    raw = code.encode("utf-8")
    return (raw[: open_brace.end_byte] + block.encode() + raw[open_brace.end_byte :]).decode(
        "utf-8"
    )


def insert_statements(language: str, code: str, lines: dict[str, list[str]]) -> str | None:
    """Statements that always run and change nothing (asserts of constants): Python at the
    end of the module, C++ / Java first thing in main's body (or the first function's)."""
    body_lines = lines[language]
    if language == "python":
        return code.rstrip("\n") + "\n\n" + "".join(f"{ln}\n" for ln in body_lines)
    tree = parse(code, language)
    body = _function_body(tree.root_node, language)
    if body is None or body.child_count == 0 or body.children[0].type != "{":
        return None
    open_brace = body.children[0]
    raw = code.encode("utf-8")
    block = "".join(f"\n    {ln}" for ln in body_lines)
    return (raw[: open_brace.end_byte] + block.encode() + raw[open_brace.end_byte :]).decode(
        "utf-8"
    )


# ----------------------------------------------------------------------------- docstrings
def insert_docstring(language: str, code: str, lines: list[str]) -> str | None:
    """A documentation block at the top: a module docstring in Python (after a shebang or
    coding line), a `/** ... */` block in C++ and Java. None if Python already opens with
    a string (a second docstring would be an expression statement, not documentation)."""
    if language == "python":
        if any('"""' in ln for ln in lines):
            return None
        rows = _lines(code)
        at = 0
        while at < min(2, len(rows)) and _PY_HEADER_SKIP.match(rows[at]):
            at += 1
        first = parse(code, language).root_node
        starts_with_string = (
            bool(first.children)
            and first.children[0].type == "expression_statement"
            and (first.children[0].children and first.children[0].children[0].type == "string")
        )
        if starts_with_string:
            return None
        doc = ['"""' + lines[0], *lines[1:], '"""']
        return "\n".join(rows[:at] + doc + rows[at:])
    block = ["/**", *[f" * {ln}".rstrip() for ln in lines], " */"]
    return "\n".join(block) + "\n" + code


# ----------------------------------------------------------------------------- layout
def _comment_spans(language: str, code: str) -> list[tuple[int, int]]:
    tree = parse(code, language)
    return sorted(
        (n.start_byte, n.end_byte) for n in _all_nodes(tree.root_node) if n.type in COMMENT_TYPES
    )


def minify(language: str, code: str) -> str | None:
    """The program with its comments, blank lines and trailing spaces removed, and (C++ /
    Java, where indentation is not syntax) every line's indentation too. Line breaks stay
    (preprocessor lines must keep theirs). None if nothing changes."""
    raw = code.encode("utf-8")
    for start, end in reversed(_comment_spans(language, code)):
        raw = raw[:start] + raw[end:]
    out = []
    for line in raw.decode("utf-8").split("\n"):
        line = line.rstrip()
        if not line.strip():
            continue
        out.append(line if language == "python" else line.lstrip())
    minified = "\n".join(out) + "\n"
    return None if minified == code else minified


def obfuscating_namer() -> Callable[[str], str]:
    """A namer that gives each local a meaningless short name (`v1`, `v2`, ... in order)."""
    seen: dict[str, str] = {}

    def namer(old: str) -> str:
        return seen.setdefault(old, f"v{len(seen) + 1}")

    return namer


# ----------------------------------------------------------------------------- claims
# Node types whose first line carries a claim about what the code does (CodeCrash style).
CLAIM_KINDS: dict[str, dict[str, str]] = {
    "python": {
        "return_statement": "return",
        "for_statement": "loop",
        "while_statement": "loop",
        "if_statement": "condition",
        "assignment": "assignment",
    },
    "cpp": {
        "return_statement": "return",
        "for_statement": "loop",
        "for_range_loop": "loop",
        "while_statement": "loop",
        "if_statement": "condition",
        "init_declarator": "assignment",
    },
    "java": {
        "return_statement": "return",
        "for_statement": "loop",
        "enhanced_for_statement": "loop",
        "while_statement": "loop",
        "if_statement": "condition",
        "variable_declarator": "assignment",
    },
}


def annotate_claims(
    language: str,
    code: str,
    claims: dict[str, list[str]],
    rng: random.Random,
    share: float = 0.5,
) -> str | None:
    """End-of-line comments that misdescribe what a line does, chosen by the line's kind
    (return, loop, condition, assignment): each kind present is annotated once with
    probability `share` (at least one line overall). The comment goes at the end of the
    line where the construct starts; whether only comments changed is checked afterwards."""
    tree = parse(code, language)
    kinds = CLAIM_KINDS[language]
    rows = _lines(code)
    by_kind: dict[str, list[int]] = {}
    for n in _all_nodes(tree.root_node):
        kind = kinds.get(n.type)
        if kind is None or n.has_error or kind not in claims:
            continue
        row = n.start_point[0]
        if rows[row].rstrip().endswith("\\") or COMMENT_PREFIX[language] in rows[row]:
            continue
        by_kind.setdefault(kind, []).append(row)
    if not by_kind:
        return None
    present = sorted(by_kind)
    picked = [k for k in present if rng.random() < share] or [rng.choice(present)]
    prefix = COMMENT_PREFIX[language]
    done: set[int] = set()
    for kind in picked:
        row = rng.choice(sorted(set(by_kind[kind])))
        if row in done:
            continue
        done.add(row)
        rows[row] = f"{rows[row].rstrip()}  {prefix} {rng.choice(claims[kind])}"
    return "\n".join(rows)
