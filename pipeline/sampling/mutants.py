"""`mutant` candidates: one small semantic edit of a correct program, found with tree-sitter.

Each operator lists the sites in the syntax tree where it applies; a mutant is the
parent with ONE site edited (the classic first-order mutant), except
`narrow_int_all`, which narrows every wide integer type at once (the "used int
instead of long long" bug). A mutant is kept only if it still parses and differs
from its parent after normalisation. Which sites are used is a pure function of
(seed, parent candidate id), so the same inputs give the same mutants.
Mutants are judged like any candidate: a mutant that happens to stay correct gets AC.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import tree_sitter as ts

from pipeline.common.syntax import parse, parses_cleanly
from pipeline.sampling.seeds import derive_seed
from schemas.candidate import Candidate
from schemas.ids import candidate_id_for, normalize_code

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Edit:
    start: int  # byte offsets into the UTF-8 source
    end: int
    replacement: str


@dataclass(frozen=True)
class Site:
    operator: str
    edits: tuple[Edit, ...]
    description: str


def _walk(node: ts.Node) -> Iterator[ts.Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _text(node: ts.Node) -> str:
    return node.text.decode("utf-8") if node.text is not None else ""


def _line(node: ts.Node) -> int:
    return node.start_point[0] + 1


def _binary_operator_nodes(root: ts.Node, language: str) -> Iterator[ts.Node]:
    """The operator tokens of binary expressions (Python comparisons included)."""
    parents = {
        "python": ("comparison_operator", "binary_operator"),
        "cpp": ("binary_expression",),
        "java": ("binary_expression",),
    }[language]
    for n in _walk(root):
        if n.type in parents:
            for c in n.children:
                if not c.is_named:
                    yield c


def _swap_ops(root: ts.Node, language: str, table: dict[str, str], operator: str) -> list[Site]:
    sites = []
    for tok in _binary_operator_nodes(root, language):
        old = _text(tok)
        if old in table:
            new = table[old]
            sites.append(
                Site(
                    operator,
                    (Edit(tok.start_byte, tok.end_byte, new),),
                    f"{operator}: `{old}` -> `{new}` at line {_line(tok)}",
                )
            )
    return sites


_NEGATE = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}
_BOUND = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
_ARITH = {
    "python": {"+": "-", "-": "+", "*": "//", "//": "*"},
    "cpp": {"+": "-", "-": "+", "*": "/", "/": "*"},
    "java": {"+": "-", "-": "+", "*": "/", "/": "*"},
}


def flip_comparison(root: ts.Node, language: str) -> list[Site]:
    """A comparison replaced by its negation (`<` -> `>=`, `==` -> `!=`)."""
    return _swap_ops(root, language, _NEGATE, "flip_comparison")


def off_by_one(root: ts.Node, language: str) -> list[Site]:
    """Strict <-> non-strict bounds; in Python also `range(..., stop)` -> stop +/- 1."""
    sites = _swap_ops(root, language, _BOUND, "off_by_one")
    if language == "python":
        for n in _walk(root):
            if n.type != "call" or _text(n.child_by_field_name("function") or n) != "range":
                continue
            args = [a for a in (n.child_by_field_name("arguments") or n).named_children]
            if not args or any(a.type in ("keyword_argument", "list_splat") for a in args):
                continue
            stop = args[0] if len(args) == 1 else args[1]
            for delta in ("+ 1", "- 1"):
                sites.append(
                    Site(
                        "off_by_one",
                        (Edit(stop.start_byte, stop.end_byte, f"({_text(stop)}) {delta}"),),
                        f"off_by_one: range stop `{_text(stop)}` {delta} at line {_line(stop)}",
                    )
                )
    return sites


def drop_branch(root: ts.Node, language: str) -> list[Site]:
    """An `if` with no else whose body is short (an edge case, an early exit) removed."""
    sites = []
    for n in _walk(root):
        if n.type != "if_statement" or n.child_by_field_name("alternative") is not None:
            continue
        if any(c.type in ("else_clause", "elif_clause") for c in n.children):
            continue
        body = n.child_by_field_name("consequence")
        if body is None or body.end_point[0] - body.start_point[0] > 3:
            continue
        filler = "pass" if language == "python" else ";"
        cond = _text(n.child_by_field_name("condition") or n).strip()
        sites.append(
            Site(
                "drop_branch",
                (Edit(n.start_byte, n.end_byte, filler),),
                f"drop_branch: removed `if {cond[:60]}` at line {_line(n)}",
            )
        )
    return sites


def _wide_int_nodes(root: ts.Node, language: str) -> list[tuple[ts.Node, str]]:
    """(node, narrower text) for every wide integer type."""
    out = []
    for n in _walk(root):
        t = _text(n)
        if language == "cpp":
            words = t.split()
            if n.type == "sized_type_specifier" and "long" in words and "double" not in words:
                rest = [
                    w for w in words if w != "long"
                ]  # long long int -> int, unsigned long -> unsigned
                out.append((n, " ".join(rest) or "int"))
            elif n.type in ("primitive_type", "type_identifier") and t in ("int64_t", "uint64_t"):
                out.append((n, t.replace("64", "32")))
        elif language == "java" and n.type == "integral_type" and t == "long":
            out.append((n, "int"))
    return out


def narrow_int(root: ts.Node, language: str) -> list[Site]:
    """C++ `long long`/`int64_t` -> `int`/`int32_t`, Java `long` -> `int`: one site each."""
    return [
        Site(
            "narrow_int",
            (Edit(n.start_byte, n.end_byte, new),),
            f"narrow_int: `{_text(n)}` -> `{new}` at line {_line(n)}",
        )
        for n, new in _wide_int_nodes(root, language)
    ]


def narrow_int_all(root: ts.Node, language: str) -> list[Site]:
    """Every wide integer type narrowed at once (Java: also `nextLong`, `Long.parseLong`, `5L`)."""
    edits = [Edit(n.start_byte, n.end_byte, new) for n, new in _wide_int_nodes(root, language)]
    if not edits:
        return []
    if language == "java":
        for n in _walk(root):
            t = _text(n)
            if n.type == "identifier" and t == "nextLong":
                edits.append(Edit(n.start_byte, n.end_byte, "nextInt"))
            elif n.type == "method_invocation" and t.startswith("Long.parseLong"):
                name = n.child_by_field_name("name")
                obj = n.child_by_field_name("object")
                if name is not None and obj is not None:
                    edits.append(Edit(obj.start_byte, name.end_byte, "Integer.parseInt"))
            elif n.type == "decimal_integer_literal" and t[-1:] in ("l", "L"):
                edits.append(Edit(n.start_byte, n.end_byte, t[:-1]))
    return [Site("narrow_int_all", tuple(edits), f"narrow_int_all: {len(edits)} edit(s)")]


def swap_arithmetic(root: ts.Node, language: str) -> list[Site]:
    """`+` <-> `-`, `*` <-> `/` (Python `//`)."""
    return _swap_ops(root, language, _ARITH[language], "swap_arithmetic")


OPERATORS: dict[str, Callable[[ts.Node, str], list[Site]]] = {
    "flip_comparison": flip_comparison,
    "off_by_one": off_by_one,
    "drop_branch": drop_branch,
    "narrow_int": narrow_int,
    "narrow_int_all": narrow_int_all,
    "swap_arithmetic": swap_arithmetic,
}
DEFAULT_OPERATORS = (
    "flip_comparison",
    "off_by_one",
    "drop_branch",
    "narrow_int_all",
    "swap_arithmetic",
)


def apply_edits(code: str, edits: Iterable[Edit]) -> str:
    data = code.encode("utf-8")
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        data = data[: e.start] + e.replacement.encode("utf-8") + data[e.end :]
    return data.decode("utf-8")


def mutate(
    code: str, language: str, *, operators: Iterable[str], rng: random.Random, limit: int
) -> list[tuple[Site, str]]:
    """Up to `limit` distinct parsing mutants, operators taken round-robin in a random order."""
    root = parse(code, language).root_node
    per_op: list[list[Site]] = []
    for name in operators:
        sites = OPERATORS[name](root, language)
        rng.shuffle(sites)
        if sites:
            per_op.append(sites)
    rng.shuffle(per_op)
    seen = {normalize_code(code)}
    out: list[tuple[Site, str]] = []
    while per_op and len(out) < limit:
        for sites in list(per_op):
            if len(out) >= limit:
                break
            if not sites:
                per_op.remove(sites)
                continue
            site = sites.pop()
            mutated = apply_edits(code, site.edits)
            norm = normalize_code(mutated)
            if norm in seen or not parses_cleanly(mutated, language):
                continue
            seen.add(norm)
            out.append((site, mutated))
    return out


def mutant_candidates(
    candidates: Iterable[Candidate],
    *,
    operators: Iterable[str] | None = None,
    per_candidate: int = 3,
    seed: int = 0,
    tier: str | None = None,
) -> list[Candidate]:
    """Mutants of the given (correct) candidates.

    Candidates with no code, or that a source marks incorrect (`reference_correct is False`),
    are not mutated: a mutant of a wrong program says nothing. The caller picks the correct ones
    (e.g. references marked correct, or candidates judged AC).
    """
    ops = tuple(operators) if operators is not None else DEFAULT_OPERATORS
    unknown = [o for o in ops if o not in OPERATORS]
    if unknown:
        raise ValueError(f"unknown mutation operator(s) {unknown}; known: {sorted(OPERATORS)}")
    out: list[Candidate] = []
    for parent in candidates:
        if not parent.code.strip() or parent.reference_correct is False:
            continue
        rng = random.Random(derive_seed(seed, parent.problem_id, parent.candidate_id))
        for index, (site, code) in enumerate(
            mutate(parent.code, parent.language, operators=ops, rng=rng, limit=per_candidate)
        ):
            out.append(
                Candidate(
                    candidate_id=candidate_id_for(parent.language, code),
                    problem_id=parent.problem_id,
                    language=parent.language,
                    code=code,
                    completion=None,
                    extraction="not_applicable",
                    origin="mutant",
                    generator=f"mutant:{site.operator}",
                    tier=tier or parent.tier,  # type: ignore[arg-type]
                    seed=seed,
                    sample_index=index,
                    parent_candidate_id=parent.candidate_id,
                    mutation=site.description,
                )
            )
    return out
