"""The project's DPO / SFT trainers read the `dpo` configs as published, in TRL's
conversational preference format (schemas/dpo.py version 2): the rows' own messages, never
a prompt rebuilt behind the user's back; a config that contradicts the rows (another
prompt style, a template that does not rebuild their prompt) and a file of the old
plain-string shape are refused with the row and field named."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.common.hub_folder import read_config
from pipeline.common.parquet import write_parquet
from pipeline.common.verifier_prompt import PromptSpec, build_messages
from pipeline.train.data import preference_rows, sft_rows
from schemas.tables import SchemaError
from tests.train.rowgen import dpo_rows, write_dataset


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dataset(tmp_path_factory.mktemp("rows"))


def test_pairs_are_the_published_messages(data: Path) -> None:
    table = read_config(data, "dpo")
    published = table.select(["prompt", "chosen", "rejected"]).to_pylist()
    pairs = preference_rows(table, PromptSpec("think")).to_list()
    assert pairs == published
    for row in pairs:  # Think: the user turn; the pre-fill opens each assistant turn
        assert [m["role"] for m in row["prompt"]] == ["user"]
        assert row["chosen"][0]["content"].startswith("<think>\n")
        assert row["rejected"][0]["content"].startswith("<think>\n")
    sft = sft_rows(table, PromptSpec("think")).to_list()
    assert [(r["prompt"], r["completion"]) for r in sft] == [
        (p["prompt"], p["chosen"]) for p in published
    ]


def test_another_prompt_style_names_the_row_and_field(data: Path) -> None:
    with pytest.raises(ValueError, match=r"row 0 .*field prompt_variant: 'think'.*'instruct'"):
        preference_rows(read_config(data, "dpo"), PromptSpec("instruct"))


def test_a_template_must_rebuild_the_rows_prompt(data: Path, tmp_path: Path) -> None:
    """A template in the training config is checked against the rows, never ignored: the
    responses answered the published prompt."""
    table = read_config(data, "dpo")
    other = tmp_path / "other.txt"
    other.write_text("Which one?\n{question}\n{candidates}\nOptions: {valid_options}\n")
    with pytest.raises(
        ValueError, match=r"row 0 \(prompt_id=[\w-]+\): field prompt: not the prompt"
    ):
        preference_rows(table, PromptSpec("think", template=str(other)))
    # the wording the rows were built with (our Think template, as a file) is accepted
    from pipeline.common.verifier_prompt import THINK_TEMPLATE

    same = tmp_path / "same.txt"
    # (a user template cannot name the answer form: it spells our default one out)
    same.write_text(THINK_TEMPLATE.replace("{answer_form}", "\\boxed{{X}}"))
    rows = preference_rows(table, PromptSpec("think", template=str(same))).to_list()
    first = table.slice(0, 1).to_pylist()[0]
    expected = build_messages(
        first["query"], first["candidates"], first["candidate_languages"], PromptSpec("think")
    )[:-1]
    assert rows[0]["prompt"] == expected == first["prompt"]


def test_a_plain_string_dpo_file_is_refused_with_what_to_do(tmp_path: Path) -> None:
    """Schema version 1 (prompt / chosen / rejected as strings, the shape before TRL's
    conversational format) is named, not half-read."""
    rows = dpo_rows()
    old = [
        r | {"prompt": r["prompt"][0]["content"], "chosen": r["chosen"][0]["content"],
             "rejected": r["rejected"][0]["content"]}
        for r in rows
    ]  # fmt: skip
    table = pa.Table.from_pylist(old)
    write_parquet(table, tmp_path / "dpo" / "train-00000-of-00001.parquet")
    with pytest.raises(SchemaError, match="schema version 1.*rebuild the dpo configs"):
        read_config(tmp_path, "dpo")
