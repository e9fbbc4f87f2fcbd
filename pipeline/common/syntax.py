"""tree-sitter parsers for the three candidate languages: one place for every stage that
reads code (extraction and mutants in sampling, bias edits and their checks in instances)."""

from __future__ import annotations

import importlib
from functools import cache

import tree_sitter as ts

_GRAMMARS = {
    "python": "tree_sitter_python",
    "cpp": "tree_sitter_cpp",
    "java": "tree_sitter_java",
}


@cache
def parser_for(language: str) -> ts.Parser:
    if language not in _GRAMMARS:
        raise ValueError(f"language: no tree-sitter grammar for {language!r}")
    grammar = importlib.import_module(_GRAMMARS[language])
    return ts.Parser(ts.Language(grammar.language()))


def parse(code: str, language: str) -> ts.Tree:
    return parser_for(language).parse(code.encode("utf-8"))


def has_error(code: str, language: str) -> bool:
    """True when the parse has an ERROR or MISSING node."""
    return parse(code, language).root_node.has_error


def parses_cleanly(code: str, language: str) -> bool:
    """True when the code is non-empty and parses with no error (a syntax check, not a compile)."""
    return bool(code.strip()) and not has_error(code, language)
