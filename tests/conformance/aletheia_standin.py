"""A stand-in for a user's checkout of Aletheia's code: the same shape as its `src/prompts.py`
(string constants `LIST_REWARD_PROMPT`, `LIST_REWARD_PROMPT_COT` with `{question}`,
`{candidates}`, `{valid_options}` and doubled braces, leading and trailing newlines) and
`src/evaluate_ckpt.py` (the Instruct user turn as an f-string in `_create_prompts_instruct`),
in our own words: Aletheia's text is not ours to copy. Both files would fail if they were
ever imported or run (a missing module, a file written at import), which the tests check.
"""

from __future__ import annotations

from pathlib import Path

THINK = """
You review programs written for a coding task. Exactly one of them is right.

[QUESTION]
{question}
[/QUESTION]

{candidates}

Choose among: {valid_options}. Put your choice in \\\\boxed{{X}} and nothing after it.
"""

THINK_BRACKETED = THINK.replace("\\\\boxed{{X}}", "\\\\boxed{{[[X]]}}")

SYSTEM = """
You review programs written for a coding task. Exactly one of them is right.
Choose among: {valid_options}. Write:
Reasoning: <your steps>
Verdict: \\\\boxed{{X}}
"""

PROMPTS = '''"""Verifier prompts (a stand-in in our words)."""
import never_installed_module  # importing this file would fail here

open("IMPORTED", "w").write("the prompt file was run")

LIST_REWARD_PROMPT = """{think}"""

LIST_REWARD_PROMPT_COT = """{system}"""

OTHER_PROMPT = "not a verifier prompt"
'''

EVALUATE = '''"""Evaluation script (a stand-in in our words)."""
import never_installed_module

open("IMPORTED", "w").write("the evaluation script was run")


def _create_prompts_instruct(example):
    letters = ["A", "B", "C", "D", "E"][: example["num_candidates"]]
    candidate_str = "\\n\\n".join(example["candidates"])
    example["prompt"] = [
        {"role": "system", "content": "unused here"},
        {
            "role": "user",
            "content": f"The task and its programs:\\n[QUESTION]\\n{example['query']}\\n[/QUESTION]\\n\\n{candidate_str}\\n\\nKeep to the format {{exactly}}.",
        },
    ]
    return example
'''


def write_checkout(
    root: Path,
    *,
    think: str = THINK,
    system: str = SYSTEM,
    evaluate: str | None = EVALUATE,
    prompt_file: str = "prompts.py",
) -> Path:
    """A checkout folder `root` with `src/<prompt_file>` (and `src/evaluate_ckpt.py` unless
    `evaluate` is None); returns `root`."""
    src = root / "src"
    src.mkdir(parents=True, exist_ok=True)
    (src / prompt_file).write_text(PROMPTS.format(think=think, system=system))
    if evaluate is not None:
        (src / "evaluate_ckpt.py").write_text(evaluate)
    return root
