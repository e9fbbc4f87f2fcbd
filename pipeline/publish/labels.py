"""The `modification` column as published: our bias type names (default) or Aletheia's labels.

Adv and Mixed rows name their bias type in `modification` (`authority`, `reverse_authority`,
...: our catalogue's names). Aletheia's Adv set (`src/rq4_datagen.py`) writes its own labels
(`authority_bias_rejected`, `reverse_authority_bias_chosen`, ...); with
`publish.modification_labels: aletheia` the six types it has are published under its labels
(`catalogue.ALETHEIA_LABELS`), so filters written for Aletheia's data match ours. Types
Aletheia's set does not have (Mixed draws from our whole catalogue) keep their names. The
build's own tables, the instance ids and the edits are unchanged: only the published column.
"""

from __future__ import annotations

from typing import Literal

import pyarrow as pa

from pipeline.instances.adversarial.catalogue import ALETHEIA_LABELS

ModificationLabels = Literal["project", "aletheia"]
COLUMN = "modification"


def with_modification_labels(table: pa.Table, labels: ModificationLabels) -> pa.Table:
    """`table` with its `modification` values in `labels` (unchanged for `project`, or a table
    without the column)."""
    if labels == "project" or COLUMN not in table.schema.names:
        return table
    i = table.schema.get_field_index(COLUMN)
    values = [ALETHEIA_LABELS.get(v, v) if v else v for v in table.column(COLUMN).to_pylist()]
    return table.set_column(i, table.schema.field(i), pa.array(values, pa.string()))


def tables_with_modification_labels(
    tables: dict[str, pa.Table], labels: ModificationLabels
) -> dict[str, pa.Table]:
    return {name: with_modification_labels(t, labels) for name, t in tables.items()}
