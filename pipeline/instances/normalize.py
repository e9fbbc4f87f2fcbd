"""Code normalisation for de-duplication: comments dropped, whitespace canonicalised.

Two candidates of a problem are the same program when their normalised text is equal.
This runs on every judged candidate (millions at scale), so it is a handful of
vectorised regular-expression passes in polars rather than a parse per program. String
and character literals are matched first at every position and kept verbatim, so a '#'
or '//' inside a string is not a comment and spaces inside strings are not touched.
Python keeps its line structure and indentation (they are syntax); C++ and Java do not.
The tree-sitter token streams in `pipeline.instances.adversarial.syntax` are the exact
reference; tests check that this agrees with them on the shapes that matter.
"""

from __future__ import annotations

import polars as pl

# Literals, tried first so that their insides are never treated as code.
_DQ = r'"(?:[^"\\\n]|\\.)*"'
_SQ = r"'(?:[^'\\\n]|\\.)*'"
_PY_STR = rf'(?:[rRbBuUfF]{{0,2}}(?:"""(?s:.*?)"""|\'\'\'(?s:.*?)\'\'\'|{_DQ}|{_SQ}))'
_C_STR = rf'(?:R"\((?s:.*?)\)"|{_DQ}|{_SQ})'

_PUNCT = r"""[^\w\s"']"""


def _passes(string: str, comment: str, keep_newlines: bool) -> list[tuple[str, str]]:
    lit = f"({string})"
    space = r"[ \t\f\v\r]" if keep_newlines else r"\s"
    passes = [
        (f"{lit}|{comment}", "${1}"),  # drop comments, keep literals
        # runs of blanks -> one space (a literal always gets exactly one after it)
        (rf"{lit}{space}*|(\S){space}+", "${1}${2} "),
        (rf"{lit}|([^\s\"'])[ ]+({_PUNCT})", "${1}${2}${3}"),  # no space before punctuation
        (rf"{lit}|({_PUNCT})[ ]+", "${1}${2}"),  # ... nor after it
    ]
    if keep_newlines:
        passes += [(r"[ \t]+\n", "\n"), (r"\n+", "\n")]  # trailing blanks, blank lines
    return passes


_PASSES = {
    "python": _passes(_PY_STR, r"#[^\n]*", keep_newlines=True),
    "cpp": _passes(_C_STR, r"//[^\n]*|/\*(?s:.*?)\*/", keep_newlines=False),
    "java": _passes(_C_STR, r"//[^\n]*|/\*(?s:.*?)\*/", keep_newlines=False),
}


def normalized_code_expr(code: pl.Expr, language: str) -> pl.Expr:
    """An expression normalising `code` written in `language` (python | cpp | java)."""
    try:
        passes = _PASSES[language]
    except KeyError:
        raise ValueError(f"language: no normaliser for {language!r}") from None
    expr = code
    for pattern, replacement in passes:
        expr = expr.str.replace_all(pattern, replacement)
    return expr.str.strip_chars()


def with_dedup_key(
    frame: pl.DataFrame, code: str = "code", language: str = "language", chunk_rows: int = 50_000
) -> pl.DataFrame:
    """Add `dedup_key` (u64 of language + normalised code); only equality of keys is used.

    Work is cut into chunks that polars runs in parallel (the regex passes dominate).
    """
    parts = []
    for lang in frame.get_column(language).unique().sort().to_list():
        part = frame.filter(pl.col(language) == lang)
        key = pl.concat_str(pl.lit(lang + "\x00"), normalized_code_expr(pl.col(code), lang)).hash(
            seed=0
        )
        for start in range(0, part.height, chunk_rows):
            parts.append(part.slice(start, chunk_rows).lazy().with_columns(dedup_key=key))
    if not parts:
        return frame.with_columns(dedup_key=pl.lit(None, dtype=pl.UInt64))
    return pl.concat(parts).collect()


def normalize_code(code: str, language: str) -> str:
    """The normalised text of one program (for tests and small tools)."""
    return pl.DataFrame({"c": [code]}).select(normalized_code_expr(pl.col("c"), language)).item()
