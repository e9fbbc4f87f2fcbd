"""The verifier prompt: one module for DPO generation, training and evaluation.

The structure is Aletheia's (`src/grpo_training.py: create_prompts`, `src/prompts.py`); the
instructions are in our own words:

- the problem between `[QUESTION]` and `[/QUESTION]`;
- each candidate between `[CANDIDATE_X]` and `[/CANDIDATE_X]` (X = A..E), its code in a
  fenced block tagged with the candidate's language; candidates separated by a blank line;
- the valid options listed as `A, B, C`; the answer asked for as `\\boxed{X}`, or as
  `\\boxed{[[X]]}` with `answer_format="bracketed"` (Aletheia's cerebrm-era prompts,
  `src/cerebrm_prompts.py`; a user template says what it says).

Two styles, as Aletheia's two model families:

- `think` (R1-style reasoning models): one user turn holding the instructions, question and
  candidates, then an assistant turn pre-filled with `<think>\\n`, which generation continues.
- `instruct` (instruction-tuned models): a system turn asking for an analysis followed by the
  final answer in a box (no think tags), then a user turn with the question and candidates.

A user can replace our wording with their own (or the exact published) template: a text file
with the placeholders `{question}` and `{candidates}` (required) and `{valid_options}`
(optional: Aletheia's Instruct user text lists no options, its system turn does), and, for
the `instruct` system turn, a second file that may use `{valid_options}`; literal braces
are doubled, as in `str.format`. Templates are read once and checked for unknown or missing
placeholders. Or, with `aletheia_src`, Aletheia's own text read from the user's checkout of its
code (`aletheia_prompts.py`: the constants of its `src/prompts.py`, never run); `wording`
records which wording a prompt used, for cards and reports.

Best-of-N (pipeline/bestofn) uses the same builder with two widenings of its own
(`PromptSpec.max_candidates`, `PromptSpec.task`): lists of up to 8 candidates (`A`..`H`, as
Aletheia's `bon_livecodebench.py` shows in one prompt), and the 0-10 scoring variant, which
asks for one score per candidate as a list in the box (`\\boxed{[s_A, s_B, ...]}`, the
shape Aletheia's `LISTSC_PROMPT` / `PAIRSC_PROMPT` ask for), in our own words.

Whitespace follows Aletheia's builders, so a published prompt is reproduced exactly: the
user turn is stripped (`PROMPT.format(...).strip()`), the system turn is used verbatim (its
template's leading and trailing newlines kept, as `LIST_REWARD_PROMPT_COT.format(...)`),
and each candidate's code goes into its block as stored, trailing newline included.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pipeline.common.answers import AnswerFormat, answer_box, list_options

PromptStyle = Literal["think", "instruct"]
# `select`: pick one candidate (a letter in the box); `score`: score each one 0-10 (a list).
PromptTask = Literal["select", "score"]
PROMPT_STYLES: tuple[str, ...] = ("think", "instruct")
THINK_PREFILL = "<think>\n"

USER_PLACEHOLDERS = frozenset({"question", "candidates", "valid_options"})
USER_REQUIRED = frozenset({"question", "candidates"})
SYSTEM_PLACEHOLDERS = frozenset({"valid_options"})
SYSTEM_REQUIRED: frozenset[str] = frozenset()

# Our wording of the Think user turn. Same slots and order as Aletheia's.
THINK_TEMPLATE = """\
You judge solutions to programming problems. Below are a problem and several candidate \
programs that try to solve it. Judge them only on functional correctness: whether they \
produce the right output for every valid input within the limits. Exactly one candidate is \
fully correct; every other one fails at least one test.

[QUESTION]
{question}
[/QUESTION]

{candidates}

Pick the correct candidate. The valid options are: {valid_options}. Give your final choice \
as {answer_form}, where X is one of those options, and write nothing after the box. Any other \
answer format counts as invalid."""

# Our wording of the Instruct system turn (analysis first, then the boxed letter).
INSTRUCT_SYSTEM_TEMPLATE = """\
You judge solutions to programming problems. You will see a problem and several candidate \
programs that try to solve it. Judge them only on functional correctness. Exactly one \
candidate is fully correct. The valid options are: {valid_options}. Answer in this format:
Analysis: <your reasoning, step by step>
Final Answer: {answer_form}
where X is the option you choose."""

INSTRUCT_USER_TEMPLATE = """\
The problem and the candidate programs:
[QUESTION]
{question}
[/QUESTION]

{candidates}

Follow the answer format exactly; anything else counts as invalid."""


# The scoring variant (Best-of-N's option), our wording: one integer score per candidate.
THINK_SCORE_TEMPLATE = """\
You judge solutions to programming problems. Below are a problem and several candidate \
programs that try to solve it. Judge them only on functional correctness: whether they \
produce the right output for every valid input within the limits.

[QUESTION]
{question}
[/QUESTION]

{candidates}

Score every candidate from 0 (certainly wrong) to 10 (certainly correct), in the order \
{valid_options}. Give your final scores as one list of integers in a box, \
{score_form}, one score per candidate, and write nothing after the box. Any other answer \
format counts as invalid."""

INSTRUCT_SCORE_SYSTEM_TEMPLATE = """\
You judge solutions to programming problems. You will see a problem and several candidate \
programs that try to solve it. Judge them only on functional correctness. Score every \
candidate from 0 (certainly wrong) to 10 (certainly correct), in the order {valid_options}. \
Answer in this format:
Analysis: <your reasoning, step by step>
Final Answer: {score_form}
with one integer score per candidate."""


def score_form(n: int) -> str:
    """The box a scoring response ends with, spelt for `n` candidates: `\\boxed{[s_A, s_B]}`."""
    return "\\boxed{[" + ", ".join(f"s_{x}" for x in list_options(n)) + "]}"


class TemplateError(ValueError):
    """A user prompt template with unknown, missing or malformed placeholders."""


def _fence(code: str) -> str:
    """A backtick fence longer than any backtick run inside the code, so the code cannot close it."""
    longest, run = 0, 0
    for ch in code:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def format_candidates(candidates: list[str], languages: list[str], most: int = 5) -> str:
    """`[CANDIDATE_A]` ... `[/CANDIDATE_A]` blocks, one per candidate, joined by blank lines
    (2..`most` candidates: 5 in the datasets, up to 8 in a Best-of-N list)."""
    n = len(candidates)
    if not 2 <= n <= most:
        raise ValueError(f"candidates: need 2..{most} candidates, got {n}")
    if len(languages) != n:
        raise ValueError(f"languages: {len(languages)} languages for {n} candidates")
    letters = list_options(n)
    blocks = []
    for letter, code, language in zip(letters, candidates, languages, strict=True):
        fence = _fence(code)
        # the code as stored (Aletheia's builders insert it unchanged)
        blocks.append(
            f"[CANDIDATE_{letter}]\n{fence}{language}\n{code}\n{fence}\n[/CANDIDATE_{letter}]"
        )
    return "\n\n".join(blocks)


def _placeholders(template: str) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:  # a lone brace
        raise TemplateError(
            f"malformed template ({exc}); write literal braces as {{{{ and }}}}"
        ) from exc


def check_template(
    template: str, allowed: frozenset[str], where: str, required: frozenset[str] | None = None
) -> str:
    """Return `template` if it uses only `allowed` placeholders and every `required` one
    (default: all of `allowed`), else raise TemplateError."""
    names = _placeholders(template)
    if unknown := names - allowed:
        raise TemplateError(
            f"{where}: unknown placeholder(s) {sorted(unknown)}; allowed: {sorted(allowed)}"
        )
    if missing := (allowed if required is None else required) - names:
        raise TemplateError(f"{where}: missing placeholder(s) {sorted(missing)}")
    return template


@lru_cache(maxsize=32)
def load_template(path: str, kind: Literal["user", "system"] = "user") -> str:
    """Read and check a user template file (cached: templates are read once per process)."""
    p = Path(path)
    if not p.is_file():
        raise TemplateError(f"prompt_template: {path} is not a file")
    allowed, required = (
        (USER_PLACEHOLDERS, USER_REQUIRED)
        if kind == "user"
        else (SYSTEM_PLACEHOLDERS, SYSTEM_REQUIRED)
    )
    return check_template(p.read_text(encoding="utf-8"), allowed, str(p), required)


def check_one_wording(
    aletheia_src: object, prompt_template: object, system_template: object, where: str = ""
) -> None:
    """Aletheia's wording (`aletheia_src`) replaces the prompt templates: a config gives one or
    the other (`where`: the section's prefix in the message, e.g. "prompt.")."""
    if aletheia_src and (prompt_template or system_template):
        raise ValueError(
            f"{where}aletheia_src: Aletheia's wording replaces prompt_template / "
            "system_template; give one or the other"
        )


@dataclass(frozen=True)
class PromptSpec:
    """How to build a verifier prompt: the style and optional user templates (file paths),
    or Aletheia's wording from a checkout of its code (`aletheia_src`)."""

    style: PromptStyle = "think"
    template: str | None = None  # user-turn template file; our wording when None
    system_template: str | None = None  # instruct system-turn template file
    answer_format: AnswerFormat = "letter"  # our wording asks for \\boxed{X} or \\boxed{[[X]]}
    aletheia_src: str | None = None  # a checkout of Aletheia (or its prompt file): its text
    task: PromptTask = "select"  # Best-of-N's scoring variant: "score"
    max_candidates: int = 5  # Best-of-N lists: up to 8 (A..H)

    def __post_init__(self) -> None:
        if self.task not in ("select", "score"):
            raise ValueError(f"task: {self.task!r} is not select or score")
        if not 2 <= self.max_candidates <= 8:
            raise ValueError(f"max_candidates: {self.max_candidates} is not in 2..8")
        if self.style not in PROMPT_STYLES:
            raise ValueError(f"style: {self.style!r} is not one of {PROMPT_STYLES}")
        if self.aletheia_src and self.task == "score":
            raise ValueError(
                "aletheia_src: only Aletheia's selection prompts are read; the scoring task "
                "asks in the project's wording (leave aletheia_src out)"
            )
        check_one_wording(self.aletheia_src, self.template, self.system_template)
        if self.system_template and self.style != "instruct":
            raise ValueError("system_template: only the 'instruct' style has a system turn")
        if self.answer_format not in ("letter", "bracketed"):
            raise ValueError(f"answer_format: {self.answer_format!r} is not letter or bracketed")


def build_messages(
    query: str,
    candidates: list[str],
    languages: list[str],
    spec: PromptSpec = PromptSpec(),
) -> list[dict[str, str]]:
    """The chat messages for one instance. Think: user turn + assistant `<think>\\n` prefill
    (generation continues that turn); Instruct: system turn + user turn."""
    blocks = format_candidates(candidates, languages, spec.max_candidates)
    options = ", ".join(list_options(len(candidates)))
    slots = {"question": query, "candidates": blocks, "valid_options": options}
    scoring = spec.task == "score"
    # Our wording names the answer form; a user template cannot (it says what it says).
    form = (
        {"score_form": score_form(len(candidates))}
        if scoring
        else {"answer_form": answer_box("X", spec.answer_format)}
    )
    user, system = _templates(spec)
    if spec.style == "think":
        ours = THINK_SCORE_TEMPLATE if scoring else THINK_TEMPLATE
        text = user.format(**slots) if user else ours.format(**slots, **form)
        return [
            {"role": "user", "content": text.strip()},
            {"role": "assistant", "content": THINK_PREFILL},
        ]
    if system is not None:
        system = system.format(valid_options=options)
    else:
        ours = INSTRUCT_SCORE_SYSTEM_TEMPLATE if scoring else INSTRUCT_SYSTEM_TEMPLATE
        system = ours.format(valid_options=options, **form)
    return [
        {"role": "system", "content": system},  # verbatim
        {"role": "user", "content": (user or INSTRUCT_USER_TEMPLATE).format(**slots).strip()},
    ]


def _templates(spec: PromptSpec) -> tuple[str | None, str | None]:
    """(user template, instruct system template) of `spec`'s style; None = our wording."""
    if spec.aletheia_src:
        from pipeline.common.aletheia_prompts import read_aletheia_prompts

        a = read_aletheia_prompts(spec.aletheia_src)
        if spec.style == "think":
            return a.think_user, None
        system, user = a.instruct()  # no Instruct user turn there: ours
        return user, system
    user = load_template(spec.template) if spec.template else None
    system = None
    if spec.style == "instruct" and spec.system_template:
        system = load_template(spec.system_template, "system")
    return user, system


def wording(spec: PromptSpec) -> dict[str, str]:
    """Which wording `spec`'s prompts use, for cards and reports: `project` (ours),
    `template` (the user's files) or `aletheia` (read from a checkout), with the sha256 of
    the text where it is not ours."""
    from pipeline.common.hashing import sha256_file

    if spec.aletheia_src:
        from pipeline.common.aletheia_prompts import read_aletheia_prompts

        a = read_aletheia_prompts(spec.aletheia_src)
        out = {"wording": "aletheia", "source": a.file, "sha256": a.sha256}
        if a.instruct_user is None:
            out["instruct_user"] = "project"  # the checkout has none (see aletheia_prompts)
        return out
    files = [f for f in (spec.template, spec.system_template) if f]
    if not files:
        return {"wording": "project"}
    return {
        "wording": "template",
        "source": ", ".join(files),
        "sha256": ",".join(sha256_file(f)[:16] for f in files),
    }


def wording_line(record: dict[str, str]) -> str:
    """One sentence naming a prompt wording (`wording`'s record)."""
    kind = record.get("wording", "project")
    if kind == "project":
        return "Verifier prompt: the project's own wording (pipeline/common/verifier_prompt.py)."
    if kind == "template":
        return f"Verifier prompt: the user's template files {record['source']} (sha256 {record['sha256']})."
    tail = " (its Instruct user turn: the project's; the checkout has none)"
    return (
        f"Verifier prompt: Aletheia's wording, read from {record['source']} "
        f"(sha256 {record['sha256'][:16]})" + (tail if record.get("instruct_user") else "") + "."
    )


def prefill(messages: list[dict[str, str]]) -> str:
    """The assistant pre-fill a generation continues ('' when the last turn is not the
    assistant's). Scoring code prepends it to the completion, as TRL does."""
    return messages[-1]["content"] if messages and messages[-1]["role"] == "assistant" else ""


def render_with_prefill(messages: list[dict[str, str]], tokenizer: Any) -> str:
    """The text a chat model sees before it writes: the template's turns up to its generation
    prompt, then the assistant prefill (Think's `<think>\\n`) unless that prompt already ends
    with it (R1-Distill's opens the think block itself). The prefill is not rendered as an
    assistant turn (`continue_final_message`): a template may rewrite such a turn (Qwen3's puts
    an empty think block before it), and generation never saw that."""
    pre = prefill(messages)
    head = messages[:-1] if pre else messages
    text: str = tokenizer.apply_chat_template(head, tokenize=False, add_generation_prompt=True)
    return text if not pre or text.endswith(pre) else text + pre


def preference_turns(
    messages: list[dict[str, str]], response: str
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(the prompt messages without the pre-fill, [the whole assistant turn]): TRL's
    conversational format, as the DPO configs publish it and the trainers read it. TRL renders
    the prompt with a generation prompt and appends the turn, so the pre-fill travels in the
    turn (added where `response` lacks it) and the tokens are the ones generation saw."""
    pre = prefill(messages)
    head = messages[:-1] if pre else messages
    body = response if response.startswith(pre) else pre + response
    return head, [{"role": "assistant", "content": body}]


def render_text(messages: list[dict[str, str]]) -> str:
    """A plain-text rendering of the messages, for tables and cards (not for generation)."""
    return "\n\n".join(f"<|{m['role']}|>\n{m['content']}" for m in messages)


def template_problem(
    where: str, path: str, kind: str = "user", styles: tuple[str, ...] = ("think",)
) -> str | None:
    """What is wrong with a verifier prompt template file (`kind` user or system), or with
    a checkout of Aletheia (`kind` aletheia: `aletheia_prompts.aletheia_problem`, for the
    prompt `styles` the caller builds), or None.

    Every unknown placeholder (with the nearest allowed name for a misspelt one) and every
    missing one, so a bad template fails in preflight (and `aletheia evaluate`'s own check)
    and not at `assemble`, minutes into a build."""
    from pipeline.errors import closest

    if kind == "aletheia":  # a checkout of Aletheia (`aletheia_src`), not a template file
        from pipeline.common.aletheia_prompts import aletheia_problem

        return aletheia_problem(where, path, styles)
    allowed = SYSTEM_PLACEHOLDERS if kind == "system" else USER_PLACEHOLDERS
    try:
        text = Path(path).read_text(encoding="utf-8")
        names = {n for _, n, _, _ in string.Formatter().parse(text) if n is not None}
    except OSError as e:
        return f"{where}: {path} cannot be read ({e.strerror or e})"
    except ValueError as e:  # a lone brace
        return f"{where}: {path}: malformed template ({e}); write literal braces as {{{{ and }}}}"
    parts, meant = [], set()
    for name in sorted(names - allowed):
        near = closest(name, allowed - names - meant)
        parts.append(f"unknown {{{name}}}" + (f" (did you mean {{{near}}}?)" if near else ""))
        meant.add(near)
    parts += [f"missing {{{name}}}" for name in sorted(allowed - names - meant)]
    if not parts:
        return None
    known = ", ".join(f"{{{n}}}" for n in sorted(allowed))
    return f"{where}: {path}: {'; '.join(parts)} (a {kind} template has exactly {known})"
