"""Parsing candidates with tree-sitter: token streams, comment and identifier positions.

Used to place edits (comments go between statements, renames touch only variables) and
to prove what an edit changed: a comment-only edit must leave the non-comment token
stream equal; a rename must change identifiers only, by one consistent bijection.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from pipeline.common.syntax import has_error as _has_error
from pipeline.common.syntax import parse

COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment"})
# Literal text is compared whole: escape sequences are children of these in the grammars,
# so descending would compare only the escapes and miss the rest of the text.
_ATOMIC_TYPES = frozenset(
    {
        "string_content",
        "string_literal",
        "raw_string_literal",
        "char_literal",
        "character_literal",
        "system_lib_string",
        "text_block",
    }
)


@dataclass(frozen=True)
class Token:
    type: str
    text: str
    row: int
    col: int  # byte column


def iter_tokens(node: Node) -> Iterator[Node]:
    """Leaves in source order (literals whole; comments included)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.child_count == 0 or n.type in _ATOMIC_TYPES:
            yield n
        else:
            stack.extend(reversed(n.children))


# (parent type, field) pairs where an identifier names a member or a keyword argument:
# a namespace of its own, which variable renaming leaves alone.
_MEMBER_POSITIONS = {
    "python": {("attribute", "attribute"), ("keyword_argument", "name")},
    "cpp": {("qualified_identifier", "name")},  # std::count; obj.x is a field_identifier already
    "java": {("field_access", "field"), ("method_invocation", "name")},
}


def is_member_name(node: Node, language: str) -> bool:
    """An identifier naming a member (obj.x, obj.f()) or a keyword argument (f(x=...))."""
    p = node.parent
    if p is None or node.type != "identifier":
        return False
    return any(
        p.type == ptype and p.child_by_field_name(fname) == node
        for ptype, fname in _MEMBER_POSITIONS[language]
    )


def tokens(language: str, code: str, *, with_comments: bool = False) -> list[Token]:
    tree = parse(code, language)
    out = []
    for n in iter_tokens(tree.root_node):
        if n.type in COMMENT_TYPES and not with_comments:
            continue
        text = n.text.decode("utf-8", "surrogateescape") if n.text is not None else ""
        kind = "member_identifier" if is_member_name(n, language) else n.type
        out.append(Token(kind, text, n.start_point[0], n.start_point[1]))
    return out


def code_stream(language: str, code: str) -> list[tuple[str, str]]:
    """The program without its comments, as (type, text) pairs. For Python, each line's
    indentation is part of the stream (it is syntax); line breaks elsewhere are not."""
    out: list[tuple[str, str]] = []
    last_row = -1
    for t in tokens(language, code):
        if language == "python" and t.row != last_row:
            out.append(("<line>", str(t.col)))
        last_row = t.row
        out.append((t.type, t.text))
    return out


def has_error(language: str, code: str) -> bool:
    return _has_error(code, language)


def differs_in_comments_only(language: str, before: str, after: str) -> bool:
    """True when `after` is `before` with comments added or changed, and nothing else.

    Both are parsed; the comment-free token streams must be equal, the comments must
    differ, and `after` may not add a parse error `before` did not have.
    """
    if code_stream(language, before) != code_stream(language, after):
        return False
    if has_error(language, after) and not has_error(language, before):
        return False
    comments_before = [
        t.text for t in tokens(language, before, with_comments=True) if t.type in COMMENT_TYPES
    ]
    comments_after = [
        t.text for t in tokens(language, after, with_comments=True) if t.type in COMMENT_TYPES
    ]
    return comments_before != comments_after


def renaming_between(language: str, before: str, after: str) -> dict[str, str] | None:
    """The identifier renaming that turns `before` into `after`, or None when the edit is
    anything other than a consistent one-to-one renaming of identifiers (comments aside)."""
    a, b = code_stream(language, before), code_stream(language, after)
    if len(a) != len(b) or has_error(language, after) and not has_error(language, before):
        return None
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    for (ta, xa), (tb, xb) in zip(a, b, strict=True):
        if ta != tb:
            return None
        if xa == xb and ta != "identifier":
            continue
        if ta != "identifier":
            return None
        if forward.setdefault(xa, xb) != xb or backward.setdefault(xb, xa) != xa:
            return None
    renamed = {k: v for k, v in forward.items() if k != v}
    return renamed or None
