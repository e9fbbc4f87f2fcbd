"""The answer columns as published: the bare letter (default) or Aletheia's `[[A]]`.

Aletheia's datasets write `chosen_answer` as `[[A]]`..`[[E]]` (`src/cerebrm_datagen.py`'s
answer list); users who feed our rows to Aletheia's own scripts can ask for that form with
`publish.answer_format: bracketed`. It rewrites `chosen_answer` in every instance and DPO
config and `rejected_answer` in the DPO configs (`invalid` stays `invalid`). The response
texts are not rewritten here: the run config hands the same form to the DPO stage
(`dpo.answer_format`), whose prompt then asks for `\\boxed{[[X]]}` and whose gold splice
writes it, as Aletheia's cerebrm-era DPO rows did. Every reader of our rows (publish checks,
card, plots, training, evaluation, DPO) takes both forms through
`pipeline.common.answers.gold_letter`, and every reader of a response both box forms.
"""

from __future__ import annotations

import pyarrow as pa

from pipeline.common.answers import AnswerFormat, format_answer
from schemas.dataset_configs import CONFIG_BY_NAME

ANSWER_COLUMNS = {"instances": ("chosen_answer",), "dpo": ("chosen_answer", "rejected_answer")}


def with_answer_format(table: pa.Table, kind: str, answer_format: AnswerFormat) -> pa.Table:
    """`table` with its answer columns in `answer_format` (unchanged for `letter` rows)."""
    for column in ANSWER_COLUMNS.get(kind, ()):
        i = table.schema.get_field_index(column)
        values = [format_answer(v, answer_format) for v in table.column(column).to_pylist()]
        table = table.set_column(i, table.schema.field(i), pa.array(values, pa.string()))
    return table


def tables_with_answer_format(
    tables: dict[str, pa.Table], answer_format: AnswerFormat
) -> dict[str, pa.Table]:
    return {
        name: with_answer_format(t, CONFIG_BY_NAME[name].kind, answer_format)
        for name, t in tables.items()
    }
