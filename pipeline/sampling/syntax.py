"""tree-sitter parsers for the three candidate languages (shared by extraction and mutants)."""

from __future__ import annotations

from functools import cache

import tree_sitter as ts

_GRAMMARS = {
    "python": "tree_sitter_python",
    "cpp": "tree_sitter_cpp",
    "java": "tree_sitter_java",
}


@cache
def parser_for(language: str) -> ts.Parser:
    import importlib

    if language not in _GRAMMARS:
        raise ValueError(f"no tree-sitter grammar for language {language!r}")
    grammar = importlib.import_module(_GRAMMARS[language])
    return ts.Parser(ts.Language(grammar.language()))


def parse(code: str, language: str) -> ts.Tree:
    return parser_for(language).parse(code.encode("utf-8"))


def parses_cleanly(code: str, language: str) -> bool:
    """True when the code parses with no ERROR or MISSING node (a syntax check, not a compile)."""
    return bool(code.strip()) and not parse(code, language).root_node.has_error
