"""What the card says about each config, measured from the rows it ships.

Every number and every descriptive claim of the card about a config's contents (list sizes,
where the candidates come from, their tiers and languages, how many rows carry bias edits,
the pass rates of the incorrect candidates) comes from a `SplitFacts` made here from the
published table, never from the run config or from what a config is meant to hold: a
demo's Train may hold more references and mutants than policy samples, and the card must
say so.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import pyarrow as pa

from pipeline.common.answers import gold_letter
from schemas.dataset_configs import CONFIG_BY_NAME, CONFIGS

Splits = dict[str, dict[str, pa.Table]]  # config -> split -> rows (layout.split_tables)

ORIGINS: tuple[str, ...] = ("policy", "reference", "mutant")
ORIGIN_WORDS: dict[str, tuple[str, str]] = {  # origin -> (one, many)
    "policy": ("policy sample", "policy samples"),
    "reference": ("reference solution", "reference solutions"),
    "mutant": ("mutant", "mutants"),
}


RATE_BINS = 11  # 0.0, 0.1, ..., 1.0


def rate_bin(rate: float) -> int:
    """A pass rate's bin: the rate rounded to the nearest tenth, halves up (0.25 -> 3)."""
    return min(RATE_BINS - 1, math.floor(round(rate * (RATE_BINS - 1), 9) + 0.5))


def _counts(values: list) -> dict:
    """Counts by value, most frequent first, ties by value (a stable, readable order)."""
    return dict(sorted(Counter(values).items(), key=lambda kv: (-kv[1], str(kv[0]))))


@dataclass(frozen=True)
class SplitFacts:
    """One split of one config, measured."""

    config: str
    split: str
    kind: str  # instances | dpo | questions
    rows: int
    problems: int
    sizes: dict[int, int] = field(default_factory=dict)  # list size -> rows
    languages: dict[str, int] = field(default_factory=dict)  # row `language` -> rows
    tiers: dict[str, int] = field(default_factory=dict)  # row `weak_strong` -> rows
    bands: dict[str, int] = field(default_factory=dict)  # row `easy_hard` -> rows
    generators: dict[str, int] = field(default_factory=dict)  # row `generator` -> rows
    positions: dict[str, int] = field(default_factory=dict)  # gold letter -> rows
    # list size -> gold letter -> rows (with n candidates the correct one is at A..n)
    positions_by_size: dict[int, dict[str, int]] = field(default_factory=dict)
    # the same over distinct source rows: Adv holds one copy of a Heldout row per bias type
    # (`source_instance_id`), so its copies are not independent draws of the position
    source_rows: int = 0
    source_positions_by_size: dict[int, dict[str, int]] = field(default_factory=dict)
    origins: dict[str, int] = field(default_factory=dict)  # candidate origin -> candidates
    # origin -> candidate generator -> candidates
    origin_generators: dict[str, dict[str, int]] = field(default_factory=dict)
    mixed_origin_rows: int = 0  # rows whose candidates have more than one origin
    modified_rows: int = 0  # rows with a bias type (`modification` set)
    modifications: dict[str, int] = field(default_factory=dict)  # bias type -> rows
    repeated_rate_rows: int = 0  # rows where two incorrect candidates share a pass rate
    incorrect_pass_rates: tuple[float, float] | None = None  # min, max over incorrect ones
    # incorrect candidates per pass rate rounded to the nearest tenth (0.0, 0.1, ..., 1.0): a
    # band's limit (0.5, 0.7, 0.9) is a bin's centre, so no bar straddles it
    incorrect_rate_bins: tuple[int, ...] = ()
    tests_per_problem: tuple[int, int] | None = None  # train_questions: min, max

    @property
    def candidates(self) -> int:
        return sum(self.origins.values())


def measure(config: str, split: str, table: pa.Table) -> SplitFacts:
    kind = CONFIG_BY_NAME[config].kind
    problems = len(set(table.column("problem_id").to_pylist()))
    if kind == "questions":
        tests = [len(t) for t in table.column("tests").to_pylist()]
        span = (min(tests), max(tests)) if tests else None
        return SplitFacts(config, split, kind, table.num_rows, problems, tests_per_problem=span)
    col = {c: table.column(c).to_pylist() for c in _INSTANCE_COLUMNS}
    origin_gens: dict[str, Counter[str]] = {}
    incorrect: list[float] = []
    repeated = 0
    for origins, gens, verdicts, rates in zip(
        col["candidate_origins"],
        col["candidate_generators"],
        col["verdicts"],
        col["pass_rates"],
        strict=True,
    ):
        for o, g in zip(origins, gens, strict=True):
            origin_gens.setdefault(o, Counter())[g] += 1
        wrong = [r for r, v in zip(rates, verdicts, strict=True) if v != "AC"]
        repeated += len(set(wrong)) < len(wrong)
        incorrect += wrong
    origins = {o: sum(c.values()) for o, c in origin_gens.items()}
    letters = [gold_letter(a) for a in col["chosen_answer"]]
    by_size: dict[int, Counter[str]] = {}
    for n, letter in zip(col["num_candidates"], letters, strict=True):
        by_size.setdefault(n, Counter())[letter] += 1
    source_sizes = _by_source_row(table, col["num_candidates"], letters)
    bins = [0] * RATE_BINS
    for r in incorrect:
        bins[rate_bin(r)] += 1
    return SplitFacts(
        config=config,
        split=split,
        kind=kind,
        rows=table.num_rows,
        problems=problems,
        sizes=dict(sorted(Counter(col["num_candidates"]).items())),
        languages=_counts(col["language"]),
        tiers=_counts(col["weak_strong"]),
        bands=_counts(col["easy_hard"]),
        generators=_counts(col["generator"]),
        positions=dict(sorted(Counter(letters).items())),
        positions_by_size={n: dict(sorted(c.items())) for n, c in sorted(by_size.items())},
        source_rows=sum(sum(c.values()) for c in source_sizes.values()),
        source_positions_by_size={
            n: dict(sorted(c.items())) for n, c in sorted(source_sizes.items())
        },
        origins=dict(sorted(origins.items(), key=lambda kv: (-kv[1], kv[0]))),
        origin_generators={o: _counts(list(c.elements())) for o, c in sorted(origin_gens.items())},
        mixed_origin_rows=sum(len(set(o)) > 1 for o in col["candidate_origins"]),
        modified_rows=sum(m is not None for m in col["modification"]),
        modifications=_counts([m for m in col["modification"] if m is not None]),
        repeated_rate_rows=repeated,
        incorrect_pass_rates=(min(incorrect), max(incorrect)) if incorrect else None,
        incorrect_rate_bins=tuple(bins),
    )


def _by_source_row(
    table: pa.Table, sizes: list[int], letters: list[str]
) -> dict[int, Counter[str]]:
    """Gold positions per list size over distinct source rows: a row edited from another
    (`source_instance_id`: Adv's copies, one per bias type) counts once with its source (the
    first of them met); any other row counts as itself (`instance_id`)."""

    def column(name: str) -> list:  # a hand-made table in a test may lack the id columns
        names = table.column_names
        return table.column(name).to_pylist() if name in names else [None] * table.num_rows

    sources = column("source_instance_id")
    ids = [iid or str(i) for i, iid in enumerate(column("instance_id"))]
    seen: set[str] = set()
    out: dict[int, Counter[str]] = {}
    for src, iid, n, letter in zip(sources, ids, sizes, letters, strict=True):
        key = src or iid
        if key in seen:
            continue
        seen.add(key)
        out.setdefault(n, Counter())[letter] += 1
    return out


_INSTANCE_COLUMNS = (
    "num_candidates",
    "language",
    "weak_strong",
    "easy_hard",
    "generator",
    "chosen_answer",
    "candidate_origins",
    "candidate_generators",
    "verdicts",
    "pass_rates",
    "modification",
)


def measure_all(splits: Splits) -> list[SplitFacts]:
    """Every split of every config present, in the card's config order."""
    return [
        measure(cfg.name, split, table)
        for cfg in CONFIGS
        for split, table in splits.get(cfg.name, {}).items()
    ]


def same_rows(a: pa.Table, b: pa.Table) -> bool:
    """Whether two splits hold the same rows (Adv publishes one table as `test` and `full`)."""
    return a is b or a.column("instance_id").to_pylist() == b.column("instance_id").to_pylist()


# --- words ---------------------------------------------------------------------------------


def share(n: int, total: int) -> str:
    return f"{100 * n / total:.0f}%" if total else "-"


def count_phrase(sizes: list[int]) -> str:
    """'2-5 candidates', '2 candidates (pairs only)', '2, 3 or 5 candidates'."""
    if not sizes:
        return "no candidates"
    if sizes == [2]:
        return "2 candidates (pairs only)"
    if len(sizes) == 1:
        return f"{sizes[0]} candidates"
    if sizes == list(range(sizes[0], sizes[-1] + 1)):
        return f"{sizes[0]}-{sizes[-1]} candidates"
    return ", ".join(map(str, sizes[:-1])) + f" or {sizes[-1]} candidates"


def sizes_phrase(sizes: dict[int, int]) -> str:
    """'pairs (2 candidates)', 'lists of 2-5 candidates', 'lists of 2, 3 or 5 candidates'."""
    got = sorted(n for n, rows in sizes.items() if rows)
    if not got:
        return "no lists"
    return "pairs (2 candidates)" if got == [2] else "lists of " + count_phrase(got)


def all_sizes(facts: list[SplitFacts]) -> list[int]:
    return sorted({n for f in facts for n, c in f.sizes.items() if c})


def _names(counts: dict[str, int], limit: int = 3) -> str:
    shown = [f"`{k}`" for k in list(counts)[:limit]]
    more = len(counts) - limit
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def origins_phrase(f: SplitFacts) -> str:
    """Where a split's candidates come from, e.g. 'all 140 candidates are policy samples
    (`m`)' or 'its 466 candidates are of mixed origins: 200 mutants (43%), ...'."""
    total = f.candidates
    if not total:
        return "no candidates"

    def part(origin: str, n: int) -> str:
        one, many = ORIGIN_WORDS.get(origin, (origin, origin))
        gens = f.origin_generators.get(origin, {})
        who = f", from {_names(gens)}" if origin == "policy" and gens else ""
        return f"{n} {one if n == 1 else many} ({share(n, total)}{who})"

    if len(f.origins) == 1:
        ((origin, n),) = f.origins.items()
        one, many = ORIGIN_WORDS.get(origin, (origin, origin))
        gens = f.origin_generators.get(origin, {})
        who = f" (from {_names(gens)})" if origin == "policy" and gens else ""
        return f"all {n} candidates are {one if n == 1 else many}{who}"
    parts = [part(o, n) for o, n in f.origins.items()]
    missing = [ORIGIN_WORDS[o][1] for o in ORIGINS if o not in f.origins]
    none = f"; no {' and no '.join(missing)}" if missing else ""
    return (
        f"its {total} candidates are of **mixed origins**: " + ", ".join(parts) + none + "; "
        f"{f.mixed_origin_rows} of its {f.rows} rows mix candidates of several origins"
    )


def _counted(counts: dict[str, int], limit: int = 6) -> str:
    """'cpp 64, java 60, python 54' (the most frequent first; a long tail counted)."""
    shown = ", ".join(f"{k} {v}" for k, v in list(counts.items())[:limit]) or "-"
    more = len(counts) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def _tier_band(f: SplitFacts) -> str:
    if len(f.tiers) == 1 and len(f.bands) == 1:
        return f"{next(iter(f.tiers))} tier, {next(iter(f.bands))} band (every row)"
    return f"tier: {_counted(f.tiers)}; band: {_counted(f.bands)}"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def describe(f: SplitFacts) -> str:
    """One config split in a few sentences, every claim measured."""
    if f.kind == "questions":
        lo, hi = f.tests_per_problem or (0, 0)
        span = f"{lo}" if lo == hi else f"{lo}-{hi}"
        return f"{f.rows} problems, each with its tests ({span} per problem)."
    if not f.rows:
        return "no rows."
    per_size = ", ".join(f"{n}: {c}" for n, c in f.sizes.items())
    sizes = sizes_phrase(f.sizes) + (f" (rows per size {per_size})" if len(f.sizes) > 1 else "")
    shape = (
        f"{f.rows} rows on {f.problems} problems; {sizes}; {_tier_band(f)}; "
        f"rows by language: {_counted(f.languages)}."
    )
    out = [shape, _sentence(origins_phrase(f))]
    mixed_gen = f.generators.get("mixed", 0)
    if mixed_gen:
        out.append(
            f"`generator` is `mixed` (candidates of several generators) on {mixed_gen} of "
            f"{f.rows} rows."
        )
    if f.incorrect_pass_rates is not None:
        lo, hi = f.incorrect_pass_rates
        out.append(f"The incorrect candidates pass {lo:.0%}-{hi:.0%} of the tests.")
    if f.modified_rows:
        types = len(f.modifications)
        out.append(
            f"{f.modified_rows} of {f.rows} rows ({share(f.modified_rows, f.rows)}) carry a "
            f"bias edit (`modification`), of {types} type{'s' if types > 1 else ''}: "
            f"{_counted(f.modifications)}."
        )
    return " ".join(out)
