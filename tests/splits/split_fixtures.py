"""Problems with planted near-duplicates, written for these tests (shared by the split tests)."""

from __future__ import annotations

import datetime as dt

from schemas.ids import problem_id_for
from schemas.problem import Problem

BASES: dict[str, str] = {
    "walls": (
        "Alice is painting a fence that consists of n planks in a row. The i-th plank has height h_i. "
        "In one stroke Alice can paint a horizontal segment of any length at any height, as long as the "
        "brush never leaves the planks. She may also paint a single plank from bottom to top with one "
        "vertical stroke. Find the minimum number of strokes needed to paint the whole fence. "
        "The first line contains a single integer n. The second line contains n integers h_1 through h_n. "
        "Print one integer, the minimum number of strokes."
    ),
    "queue": (
        "There are n customers waiting in a queue at the bank, and the service time of customer i is t_i "
        "minutes. A customer is disappointed if the total time they wait before being served is greater "
        "than their own service time. You may reorder the queue in any way you like before the bank opens. "
        "Determine the maximum number of customers who will not be disappointed. The first line contains "
        "a single integer n. The second line contains n integers t_1 through t_n. Output the answer."
    ),
    "grid": (
        "A robot stands in the top left cell of a grid with r rows and c columns. Some cells are blocked "
        "by rocks and the robot can move only right or down. Count the number of distinct paths that take "
        "the robot to the bottom right cell without ever entering a blocked cell, modulo one billion and "
        "seven. The first line contains r and c. Each of the next r lines describes one row of the grid, "
        "where a dot is a free cell and a hash sign is a rock. Print the number of paths."
    ),
    "strings": (
        "Bob has a string s made of lowercase English letters. He calls a substring beautiful if every "
        "letter that occurs in it occurs an even number of times. Your task is to count the beautiful "
        "substrings of s. Two substrings are different if they start or end at different positions, even "
        "if they are equal as strings. The only line of input contains the string s, whose length does not "
        "exceed two hundred thousand. Print the number of beautiful substrings."
    ),
    "graph": (
        "The kingdom has n cities connected by m bidirectional roads, and every road has a toll. The king "
        "wants to choose a set of roads so that every pair of cities is connected and the largest toll "
        "among the chosen roads is as small as possible. Among all such sets he prefers the one with the "
        "smallest total toll. The first line contains n and m. Each of the next m lines contains three "
        "integers u, v and w describing a road. Print the largest toll and the total toll of the set."
    ),
    "primes": (
        "For a given positive integer x, a prime gap is the difference between two consecutive primes. "
        "Given q queries, each consisting of two numbers l and r, report the largest prime gap between "
        "consecutive primes that both lie in the interval from l to r inclusive, or minus one if fewer "
        "than two primes lie in it. The first line contains q. Each of the following q lines contains two "
        "integers l and r, with r at most ten million. For each query output the answer on its own line."
    ),
}

# Planted near-duplicates of "walls" and "queue": reworded, renamed, reordered.
VARIANTS: dict[str, tuple[str, str]] = {
    "walls_reworded": (
        "walls",
        BASES["walls"]
        .replace("is painting a fence", "wants to paint a fence")
        .replace("Find the minimum number", "Compute the smallest number"),
    ),
    "walls_renamed": (
        "walls",
        BASES["walls"].replace("Alice", "Carol").replace("She may", "Carol may"),
    ),
    "queue_reordered": (
        "queue",
        " ".join(
            reversed([s.strip() + "." for s in BASES["queue"].split(". ") if s.strip()])
        ).replace("..", "."),
    ),
    "queue_renamed": ("queue", BASES["queue"].replace("bank", "clinic").replace("t_", "d_")),
}


def make_problem(
    source_id: str, statement: str, source: str = "test", date: dt.date | None = None
) -> Problem:
    return Problem(
        problem_id=problem_id_for(source, source_id),
        source=source,
        source_id=source_id,
        statement=statement,
        prompt_statement=statement,
        test_mode="stdio",
        tests=[{"input": "1\n", "output": "1\n"}],
        contest_date=date,
    )


def planted_problems() -> list[Problem]:
    rows = [make_problem(k, v) for k, v in BASES.items()]
    rows += [make_problem(k, text) for k, (_, text) in VARIANTS.items()]
    return rows
