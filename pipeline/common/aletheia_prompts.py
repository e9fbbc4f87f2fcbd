"""Aletheia's own verifier prompts, read from the user's checkout of its code (`aletheia_src`).

The project ships its own wording (`verifier_prompt.py`); Aletheia's text is not ours to
ship. A user who has a checkout of insait-institute/aletheia points `aletheia_src` at it (the
folder, whose `src/prompts.py` is read, or one prompt file, e.g. `src/cerebrm_prompts.py`,
the cerebrm-era file whose prompt asks for `\\boxed{[[X]]}`), and every verifier prompt is
then built from Aletheia's text. The file is parsed with `ast`, never imported or run:

- the Think user turn: the string constant `LIST_REWARD_PROMPT` (placeholders `{question}`,
  `{candidates}`, `{valid_options}`), as `grpo_training.py` / `evaluate_ckpt.py` use it;
- the Instruct system turn: the constant `LIST_REWARD_PROMPT_COT` (`{valid_options}`); a
  prompt file without it (the stored versions of `cerebrm_prompts.py`) serves the Think style
  only, and an Instruct prompt asked of it is an error naming the constant;
- the Instruct user turn: Aletheia keeps no constant for it; `evaluate_ckpt.py` (beside the
  prompt file) writes it as an f-string in `_create_prompts_instruct`, which is read as a
  template (its `example['query']` field becomes `{question}`, `candidate_str`
  `{candidates}`). A checkout whose `evaluate_ckpt.py` has no such f-string keeps the
  project's Instruct user turn, and the wording record says so.

What is missing (no such file, a constant absent, a constant that is not a string, a
placeholder unknown or missing) is one line (`aletheia_problem`), which preflight, `aletheia
evaluate` and `aletheia train` print before any model loads.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pipeline.common.hashing import sha256_text

PROMPT_FILE = Path("src") / "prompts.py"  # where a checkout keeps its verifier prompts
THINK_USER = "LIST_REWARD_PROMPT"
INSTRUCT_SYSTEM = "LIST_REWARD_PROMPT_COT"
INSTRUCT_USER_FILE = "evaluate_ckpt.py"
INSTRUCT_USER_FUNCTION = "_create_prompts_instruct"
# The f-string fields of Aletheia's Instruct user turn, as our placeholders.
FSTRING_FIELDS = {
    "example['query']": "question",
    'example["query"]': "question",
    "candidate_str": "candidates",
    "valid_options": "valid_options",
}


class AletheiaPromptError(ValueError):
    """A checkout (or prompt file) that cannot give Aletheia's verifier prompts; one line."""


@dataclass(frozen=True)
class AletheiaPrompts:
    """Aletheia's wording as read from one checkout (templates in `str.format` syntax)."""

    file: str  # the prompt file read
    think_user: str
    instruct_system: str | None  # None: the file has none; no Instruct prompt can be built
    instruct_user: str | None  # None: the checkout has none; the project's is used
    instruct_user_file: str | None

    @property
    def sha256(self) -> str:
        """One hash of the wording (the three texts), for build ids, cards and reports."""
        return sha256_text(self.think_user, self.instruct_system or "", self.instruct_user or "")

    def instruct(self) -> tuple[str, str | None]:
        """(system template, user template or None for ours) of the Instruct style."""
        if self.instruct_system is None:
            raise AletheiaPromptError(
                f"{self.file}: constant {INSTRUCT_SYSTEM} absent (the Instruct system turn)"
            )
        return self.instruct_system, self.instruct_user


def prompt_file(src: str | Path) -> Path:
    """The prompt file `src` names: a checkout folder's `src/prompts.py`, or the file itself."""
    p = Path(src)
    return p / PROMPT_FILE if p.is_dir() else p


def _parse(path: Path) -> ast.Module:
    if not path.is_file():
        raise AletheiaPromptError(f"{path}: no such file")
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError) as e:
        raise AletheiaPromptError(
            f"{path}: not Python source Aletheia's prompts can be read from ({e})"
        )


def _constants(module: ast.Module) -> dict[str, ast.expr]:
    """Module-level `NAME = value` assignments (the last one wins, as at import)."""
    out: dict[str, ast.expr] = {}
    for node in module.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            out[node.target.id] = node.value
    return out


def _string(path: Path, constants: dict[str, ast.expr], name: str) -> str:
    if name not in constants:
        raise AletheiaPromptError(f"{path}: constant {name} absent")
    node = constants[name]
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        raise AletheiaPromptError(
            f"{path}: {name} is not a string literal (a {type(node).__name__} expression)"
        )
    return node.value


def _fstring_template(path: Path, node: ast.JoinedStr) -> str:
    """An f-string as a `str.format` template: literal parts with braces doubled, each field
    by its placeholder (FSTRING_FIELDS)."""
    parts = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(str(value.value).replace("{", "{{").replace("}", "}}"))
            continue
        assert isinstance(value, ast.FormattedValue)
        source = ast.unparse(value.value)
        name = FSTRING_FIELDS.get(source)
        if name is None or value.conversion != -1 or value.format_spec is not None:
            raise AletheiaPromptError(
                f"{path}: {INSTRUCT_USER_FUNCTION}: unexpected f-string field {{{source}}} in "
                f"the user turn (known: {', '.join(sorted(set(FSTRING_FIELDS)))})"
            )
        parts.append("{" + name + "}")
    return "".join(parts)


def _user_fstring(path: Path) -> str | None:
    """The user turn's f-string of `_create_prompts_instruct` in `path` as a template; None
    when the file or the function is not there (an older or newer checkout)."""
    if not path.is_file():
        return None
    module = _parse(path)
    for fn in module.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == INSTRUCT_USER_FUNCTION:
            for node in ast.walk(fn):
                if not isinstance(node, ast.Dict):
                    continue
                items = {
                    k.value: v
                    for k, v in zip(node.keys, node.values, strict=True)
                    if isinstance(k, ast.Constant) and isinstance(k.value, str)
                }
                role, content = items.get("role"), items.get("content")
                if isinstance(role, ast.Constant) and role.value == "user":
                    if isinstance(content, ast.JoinedStr):
                        return _fstring_template(path, content)
                    if isinstance(content, ast.Constant) and isinstance(content.value, str):
                        return content.value
            return None
    return None


@lru_cache(maxsize=16)
def read_aletheia_prompts(src: str) -> AletheiaPrompts:
    """Aletheia's verifier prompts from the checkout or prompt file `src`, placeholders
    checked; raises AletheiaPromptError with one line saying what is missing."""
    from pipeline.common.verifier_prompt import (
        SYSTEM_PLACEHOLDERS,
        SYSTEM_REQUIRED,
        USER_PLACEHOLDERS,
        USER_REQUIRED,
        TemplateError,
        check_template,
    )

    path = prompt_file(src)
    constants = _constants(_parse(path))
    think = _string(path, constants, THINK_USER)
    system = _string(path, constants, INSTRUCT_SYSTEM) if INSTRUCT_SYSTEM in constants else None
    user_file = path.parent / INSTRUCT_USER_FILE
    instruct_user = _user_fstring(user_file)
    checks = [(think, USER_PLACEHOLDERS, USER_REQUIRED, f"{path}: {THINK_USER}")]
    if system is not None:
        checks.append((system, SYSTEM_PLACEHOLDERS, SYSTEM_REQUIRED, f"{path}: {INSTRUCT_SYSTEM}"))
    if instruct_user is not None:
        where = f"{user_file}: {INSTRUCT_USER_FUNCTION}"
        checks.append((instruct_user, USER_PLACEHOLDERS, USER_REQUIRED, where))
    for text, allowed, required, where in checks:
        try:
            check_template(text, allowed, where, required)
        except TemplateError as e:
            raise AletheiaPromptError(f"placeholder mismatch: {e}") from None
    return AletheiaPrompts(
        file=str(path),
        think_user=think,
        instruct_system=system,
        instruct_user=instruct_user,
        instruct_user_file=str(user_file) if instruct_user is not None else None,
    )


def aletheia_problem(where: str, src: str, styles: tuple[str, ...] = ("think",)) -> str | None:
    """What keeps `src` from giving Aletheia's prompts in `styles`, as one line, or None."""
    try:
        prompts = read_aletheia_prompts(str(src))
        if "instruct" in styles:
            prompts.instruct()
    except AletheiaPromptError as e:
        return f"{where}: {e}"
    return None


def aletheia_files(src: str) -> list[Path]:
    """The files the wording is read from (their bytes enter cache keys)."""
    path = prompt_file(src)
    user_file = path.parent / INSTRUCT_USER_FILE
    return [p for p in (path, user_file) if p.is_file()]


# The box a template asks for, as written in `str.format` syntax: `\\boxed{{[[X]]}}` or
# `\\boxed{{X}}` (any capital as the placeholder letter).
_ASKS_BRACKETED = re.compile(r"\\boxed\{\{\[\[[A-Z]\]\]\}\}")
_ASKS_LETTER = re.compile(r"\\boxed\{\{[A-Z]\}\}")


def asked_form(template: str) -> str | None:
    """The answer form a template's text asks for (`bracketed` for `\\boxed{[[X]]}`,
    `letter` for `\\boxed{X}`), or None when it names no box."""
    if _ASKS_BRACKETED.search(template):
        return "bracketed"
    if _ASKS_LETTER.search(template):
        return "letter"
    return None


def form_problem(where: str, src: str, answer_format: str) -> str | None:
    """One line when Aletheia's Think prompt in `src` asks for another box than the build
    writes and rewards (`answer_format`), else None (also when `src` cannot be read: that
    is `aletheia_problem`'s line)."""
    try:
        prompts = read_aletheia_prompts(str(src))
    except AletheiaPromptError:
        return None
    asked = asked_form(prompts.think_user)
    if asked is None or asked == answer_format:
        return None
    box = {"letter": "\\boxed{X}", "bracketed": "\\boxed{[[X]]}"}
    return (
        f"{where}: {prompts.file}: {THINK_USER} asks for {box[asked]} but the answers are "
        f"`{answer_format}` ({box[answer_format]}): set publish.answer_format: {asked}, or "
        "use the prompt file that asks for the published form"
    )
