"""The build graph's node names, in build order, for what must not load the graph itself:
`aletheia stage --help` lists them (pipeline/stages.py imports every stage's modules, seconds
of pyarrow, polars and tree-sitter). One style: lower case, words joined by `-` (a node's
table or folder may keep its own name: the `mixed-dpo` node writes `mixed_dpo`).

pipeline/stages.py refuses to load when its GRAPH names other nodes, so the two cannot
drift apart."""

from __future__ import annotations

NODES: tuple[str, ...] = (
    "ingest",
    "splits",
    "fit-policy",
    "sample",
    "judge",
    "tiny-model",
    "assemble",
    "mixed-edits",
    "mixed-judge",
    "mixed",
    "dpo-responses",
    "dpo",
    "mixed-dpo-responses",
    "mixed-dpo",
    "adv-edits",
    "adv-judge",
    "adv",
    "manifest",
    "publish",
    "push",
    "evaluate",
)
