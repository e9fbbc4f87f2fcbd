"""Prompts per language and code extraction from completions."""

from __future__ import annotations

import pytest

from pipeline.sampling.extraction import extract_code
from pipeline.sampling.prompts import chat_messages, user_prompt
from tests.sampling.problems_fixture import function_problem, sum_problem


@pytest.mark.parametrize(
    ("completion", "language", "code", "status"),
    [
        ("x\n```python\nprint(1)\n```\ny\n```py\nprint(2)\n```\n", "python", "print(2)", "ok"),
        ("```cpp\nint main(){}\n```\n```python\nprint(3)\n```", "cpp", "int main(){}", "ok"),
        ("~~~java\nclass Main{}\n~~~", "java", "class Main{}", "ok"),
        ("```\nprint(1)\n```", "python", "print(1)", "fallback"),
        ("Here:\n```python\nprint(1)\nx = (", "python", "print(1)\nx = (", "fallback"),  # cut off
        ("print(int(input()) * 2)", "python", "print(int(input()) * 2)", "fallback"),
        ("```cpp\nint main(){}\n```", "python", "", "wrong_language"),
        ("I think the answer is to loop.", "python", "", "no_code"),
        ("Hello", "python", "", "no_code"),
        ("", "java", "", "no_code"),
    ],
)
def test_extract_code(completion, language, code, status):
    got = extract_code(completion, language)
    assert (got.code, got.status) == (code, status)


def test_extraction_failure_never_returns_code():
    for text in ("nothing here", "```java\nclass A {}\n```"):
        got = extract_code(text, "python")
        assert got.status in {"no_code", "wrong_language"} and got.code == ""


def test_prompts_name_language_mode_and_signature():
    p = sum_problem()
    for lang, words in {
        "python": "Python",
        "cpp": "int main()",
        "java": "public class Main",
    }.items():
        text = user_prompt(p, lang)
        assert words in text and p.statement in text and f"```{lang}" in text
    f = user_prompt(function_problem(), "python")
    assert "`double`" in f and "def double(x: int) -> int:" in f and "standard input" not in f
    msgs = chat_messages(p, "cpp")
    assert [m["role"] for m in msgs] == ["system", "user"]
    with pytest.raises(ValueError, match="unsupported language"):
        user_prompt(p, "rust")
