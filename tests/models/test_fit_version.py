"""The fitting code is pinned by FIT_CODE_VERSION: changing it without a bump must fail here.

A fitted policy's identity (its `fit.json` key, the sampled source's revision `fit-<digest>`
and so every build id) holds FIT_CODE_VERSION, not the source of pipeline/models/policy.py.
This test hashes the syntax tree of the code that decides the fitted weights and compares it
with the value recorded below, so a change to that code is noticed even though no key moves.

What is hashed: the definitions named in FITTING_CODE, as syntax trees, so comments, blank
lines, formatting and positions never count. Docstrings are stripped too: they are prose,
and rewording one cannot change a weight. Everything else counts, type annotations included
(cheap to re-record, and telling a harmless annotation from a harmful default is not worth
the risk). The tree is written out field by field, leaving out fields that are None or empty,
so Python versions that add empty fields (3.12's `type_params`) or hide them (3.13's
`ast.dump`) give the same text.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from pipeline.models import policy, tiny

# module -> the top-level definitions (functions, classes, assignments) that shape the weights
FITTING_CODE = {
    policy: (
        "SPECIALS",
        "UNK",
        "_LINE_PATTERN",
        "fenced",
        "examples_from_problems",
        "line_tokenizer",
        "_sequences",
        "fit_policy",
        "_render",
    ),
    tiny: ("CHATML_TEMPLATE",),
}
# Re-record when the fitting code changed, right after bumping policy.FIT_CODE_VERSION (a change
# that cannot move a weight needs no bump: the last re-record, without one, was fit_policy's
# import of the CPU-kernel pin from its new module, pipeline.common.cpu).
FITTING_CODE_DIGEST = "40a177a9a0fef0bb"


def _canonical(node: object) -> str:
    """A syntax tree as text: node type and non-empty fields, no positions, no docstrings."""
    if isinstance(node, ast.AST):
        body = getattr(node, "body", None)
        fields = []
        for name, value in ast.iter_fields(node):
            if name == "body" and _has_docstring(node):
                value = body[1:]
            if value is None or value == []:
                continue
            fields.append(f"{name}={_canonical(value)}")
        return f"{type(node).__name__}({', '.join(fields)})"
    if isinstance(node, list):
        return "[" + ", ".join(_canonical(v) for v in node) + "]"
    return repr(node)


def _has_docstring(node: ast.AST) -> bool:
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module):
        return False
    return ast.get_docstring(node, clean=False) is not None


def _definitions(module) -> dict[str, ast.AST]:
    """The module's top-level definitions by the name they bind."""
    tree = ast.parse(Path(module.__file__).read_text())
    found: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found[node.target.id] = node
    return found


def fitting_code_digest() -> str:
    h = hashlib.sha256()
    for module, names in FITTING_CODE.items():
        defs = _definitions(module)
        missing = [n for n in names if n not in defs]
        assert not missing, (
            f"{module.__name__}: {missing} no longer defined at top level; update FITTING_CODE "
            "in tests/models/test_fit_version.py to name the code that fits the policies now"
        )
        for name in names:
            h.update(f"{module.__name__}.{name}\n{_canonical(defs[name])}\n".encode())
    return h.hexdigest()[:16]


def test_fitting_code_change_needs_a_version_bump():
    digest = fitting_code_digest()
    assert digest == FITTING_CODE_DIGEST, (
        f"the policy fitting code changed (its syntax-tree digest is {digest}, recorded "
        f"{FITTING_CODE_DIGEST}). If the change can alter the fitted weights, bump "
        f"FIT_CODE_VERSION in pipeline/models/policy.py (now {policy.FIT_CODE_VERSION!r}; every "
        "build id changes with it). Either way, re-record FITTING_CODE_DIGEST = "
        f"{digest!r} in tests/models/test_fit_version.py."
    )


def test_the_digest_ignores_docstrings_and_comments_but_not_code():
    """The guard's own rules, on a small function: prose never counts, code always does."""
    plain = "def f(x):\n    return x + 1\n"
    prose = 'def f(x):  # a comment\n    """Adds one."""\n\n    return x + 1  # why\n'
    changed = "def f(x):\n    return x + 2\n"

    def text(src: str) -> str:
        return _canonical(ast.parse(src).body[0])

    assert text(plain) == text(prose)
    assert text(plain) != text(changed)


def test_the_version_is_what_the_fit_identity_uses():
    """The fit key and the revision read the pinned version, not the file's bytes."""
    assert policy._module_digest() == policy.FIT_CODE_VERSION
