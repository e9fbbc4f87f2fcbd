"""Prompts asking a policy model for one complete program (our own wording).

stdio mode: a whole program reading standard input and writing standard output.
function mode: the function with the given name (and starter signature when the
source has one); the tests call it after the candidate's code.
"""

from __future__ import annotations

from schemas.problem import Problem

LANGUAGE_NAMES = {"python": "Python 3", "cpp": "C++17", "java": "Java 17"}
FENCE_TAGS = {"python": "python", "cpp": "cpp", "java": "java"}

SYSTEM_PROMPT = (
    "You are an expert competitive programmer. You write correct, efficient programs "
    "and put the final program in a single fenced code block."
)

_STDIO_RULES = {
    "python": "Read all input from standard input and print the answer to standard output.",
    "cpp": "Write a complete program with `int main()` that reads standard input and writes "
    "standard output. Use 64-bit integers where values can be large.",
    "java": "Write a complete program with a `public class Main` and a `main` method that reads "
    "standard input and writes standard output.",
}


def problem_text(problem: Problem) -> str:
    return (problem.prompt_statement or problem.statement).strip()


def user_prompt(problem: Problem, language: str) -> str:
    if language not in LANGUAGE_NAMES:
        raise ValueError(f"problem {problem.problem_id}: unsupported language {language!r}")
    name, tag = LANGUAGE_NAMES[language], FENCE_TAGS[language]
    parts = [f"Solve the following problem in {name}.", "", problem_text(problem), ""]
    if problem.test_mode == "function":
        if not problem.entry_point:
            raise ValueError(f"problem {problem.problem_id}: function mode needs entry_point")
        parts.append(
            f"Implement the function `{problem.entry_point}`; it will be called directly, "
            "so do not read input or print the answer."
        )
        if problem.starter_code:
            parts += [
                "Start from this signature:",
                f"```{tag}",
                problem.starter_code.rstrip(),
                "```",
            ]
    else:
        parts.append(_STDIO_RULES[language])
    parts += ["", f"Answer with the complete program in one ```{tag} code block at the end."]
    return "\n".join(parts)


def chat_messages(problem: Problem, language: str, *, system: bool = True) -> list[dict[str, str]]:
    msgs = [{"role": "system", "content": SYSTEM_PROMPT}] if system else []
    msgs.append({"role": "user", "content": user_prompt(problem, language)})
    return msgs
