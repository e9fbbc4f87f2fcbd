"""The card's DPO cue table: how well a format or length cue alone tells a DPO config's
chosen turn from its rejected one (pipeline/instances/dpo/cues.py), measured from the
published rows, with a warning where one cue orders more than 90% of the pairs."""

from __future__ import annotations

import sys

import pyarrow as pa

from pipeline.instances.dpo.cues import CUE_WORDS, SEPARATES_WARN, CueStats, measure_rows
from schemas.dataset_configs import CONFIGS

HEAD = "| config | cue | chosen | rejected | chosen more | chosen less | same | one cue orders |"


def _values(s: CueStats) -> tuple[str, str]:
    if s.cue == "think_closed":
        return f"{s.chosen_value:.0%}", f"{s.rejected_value:.0%}"
    if s.cue == "boxes":
        return f"mean {s.chosen_value:.2f}", f"mean {s.rejected_value:.2f}"
    return f"median {s.chosen_value:.0f}", f"median {s.rejected_value:.0f}"


def _row(name: str, s: CueStats) -> str:
    chosen, rejected = _values(s)
    ratio = f"; median ratio {s.median_ratio:.2f}" if s.median_ratio is not None else ""
    sep = f"{s.separates:.0%}"
    sep = f"**{sep}**" if s.separates > SEPARATES_WARN else sep
    cells = [name, CUE_WORDS[s.cue], chosen, rejected + ratio, str(s.chosen_higher),
             str(s.chosen_lower), str(s.tied), sep]  # fmt: skip
    return "| " + " | ".join(cells) + " |"


def cue_stats(tables: dict[str, pa.Table]) -> dict[str, list[CueStats]]:
    """config -> its cues, for every DPO config with rows."""
    return {
        c.name: measure_rows(tables[c.name].select(["chosen", "rejected"]).to_pylist())
        for c in CONFIGS
        if c.kind == "dpo" and c.name in tables and tables[c.name].num_rows
    }


def dpo_cues_md(tables: dict[str, pa.Table]) -> str:
    """The card's section ('' without a DPO config)."""
    stats = cue_stats(tables)
    if not stats:
        return ""
    rows = [_row(name, s) for name, cues in stats.items() for s in cues]
    warn = [
        f'- **Warning:** in `{name}`, the cue "{CUE_WORDS[s.cue]}" alone orders '
        f"{s.separates:.0%} of the {s.pairs} pairs: a model trained on them can learn the cue "
        "instead of the answer."
        for name, cues in stats.items()
        for s in cues
        if s.separates > SEPARATES_WARN
    ]
    warned = {s.cue for cues in stats.values() for s in cues if s.separates > SEPARATES_WARN}
    fix = (
        "\n\nA build with `dpo.rejected_form: closed` keeps only rejected responses that "
        "picked a letter and cuts and closes their thinking as the chosen turns are, so the "
        "two turns differ in reasoning and letter, not in form"
        + (
            "; a length gap within the reasoning itself stays (this table measures it)."
            if "length" in warned
            else "."
        )
        if warned
        else ""
    )
    return (
        "\n".join(
            [
                "### DPO pair cues",
                "",
                (
                    "Whether a surface cue alone tells a pair's chosen turn from its rejected "
                    "one: the share of turns that close `</think>`, the number of `\\boxed{}` "
                    "and the length in characters; then the pairs where the chosen turn has "
                    "more of the cue, less, or the same, and the share one rule on the cue "
                    "(more of it, or less) orders correctly. Aletheia's construction closes "
                    "every chosen Think turn with `</think>` and the gold box and keeps the "
                    "rejected turn as the verifier wrote it."
                ),
                "",
                HEAD,
                "| --- | --- | --- | --- | ---: | ---: | ---: | ---: |",
                *rows,
                *([""] + warn if warn else []),
            ]
        )
        + fix
    )


def main(argv: list[str]) -> int:
    """`python -m pipeline.publish.card_cues HUB_DIR`: the section for a published folder."""
    from pipeline.common.hub_folder import read_config

    if len(argv) != 1:
        print("usage: python -m pipeline.publish.card_cues HUB_DIR", file=sys.stderr)
        return 2
    tables = {}
    for c in CONFIGS:
        if c.kind == "dpo":
            try:
                tables[c.name] = read_config(argv[0], c.name)
            except (FileNotFoundError, ValueError) as e:
                print(f"{c.name}: {e}", file=sys.stderr)
    print(dpo_cues_md(tables))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
