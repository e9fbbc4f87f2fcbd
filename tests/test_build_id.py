"""The run's build id follows the content of every template file the config names."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.config import RunConfig, load_run_config

USER = "[Q]\n{question}\n[/Q]\n{candidates}\nOptions: {valid_options}\n"
SYSTEM = "Answer with one of {valid_options}.\n"
CHAT = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"


def _model_source(chat_template: str) -> dict:
    return {
        "kind": "model",
        "name": "tiny",
        "model": "some/model",
        "tier": "weak",
        "chat_template": chat_template,
    }


@pytest.mark.parametrize(
    "where",
    ["prompt_template", "assemble.prompt_template", "dpo.prompt_template", "dpo.system_template"],
)
def test_editing_a_template_changes_the_build_id(tmp_path: Path, where: str) -> None:
    tpl = tmp_path / "t.txt"
    tpl.write_text(SYSTEM if where.endswith("system_template") else USER)
    section, _, field = where.rpartition(".")
    raw: dict = {section: {field: str(tpl)}} if section else {field: str(tpl)}
    if section == "dpo" and field == "system_template":
        raw["dpo"]["variants"] = ["instruct"]
    before = load_run_config(raw).build_id
    assert load_run_config(raw).build_id == before  # deterministic
    tpl.write_text(tpl.read_text() + "Be brief.\n")
    assert load_run_config(raw).build_id != before


def test_chat_template_file_content_counts(tmp_path: Path) -> None:
    tpl = tmp_path / "chat.jinja"
    tpl.write_text(CHAT)
    raw = {"sample": {"sources": [_model_source(str(tpl))]}}
    before = load_run_config(raw).build_id
    tpl.write_text(CHAT.replace("\n", " "))
    assert load_run_config(raw).build_id != before
    # Inline Jinja text is part of the config itself.
    inline = load_run_config({"sample": {"sources": [_model_source(CHAT)]}}).build_id
    assert inline != load_run_config({"sample": {"sources": [_model_source(CHAT + " ")]}}).build_id


def test_same_content_at_another_path_keeps_the_build_id(tmp_path: Path) -> None:
    """Decided: the id names the rows, and the rows depend on the template's text only."""
    a, b = tmp_path / "a.txt", tmp_path / "sub" / "b.txt"
    b.parent.mkdir()
    a.write_text(USER)
    b.write_text(USER)
    assert RunConfig(prompt_template=str(a)).build_id == RunConfig(prompt_template=str(b)).build_id
    assert RunConfig(prompt_template=str(a)).build_id != RunConfig().build_id


def test_missing_template_file_names_the_field(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"dpo\.prompt_template: template file .*nope\.txt"):
        RunConfig.model_validate({"dpo": {"prompt_template": str(tmp_path / "nope.txt")}})


def test_an_explicit_build_id_reads_no_template(tmp_path: Path) -> None:
    cfg = RunConfig(build_id="b_fixed", prompt_template=str(tmp_path / "absent.txt"))
    assert cfg.build_id == "b_fixed" == cfg.assemble.build_id


def test_the_evaluate_section_changes_neither_the_build_id_nor_a_dump_without_it() -> None:
    base = load_run_config({"seed": 3})
    with_eval = load_run_config(
        {"seed": 3, "evaluate": {"model": "m", "k": 2, "constrain_answer": True}}
    )
    assert with_eval.build_id == base.build_id
    assert with_eval.evaluate is not None and with_eval.evaluate.eval_config().k == 2
    assert with_eval.eval_dir == Path("out/aletheia/eval") and base.eval_dir is None
    # absent: dumped as the `{}` it always was, and read back as absent
    dump = base.model_dump(mode="json")
    assert dump["evaluate"] == {} and load_run_config(dump).evaluate is None
    again = load_run_config(with_eval.model_dump(mode="json"))
    assert again.evaluate == with_eval.evaluate and again.build_id == base.build_id
    with pytest.raises(ValueError, match="evaluate.kk"):
        load_run_config({"evaluate": {"model": "m", "kk": 2}})


REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "configs" / "demo.yaml"


def test_build_id_survives_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    """The id is the hash of `data_projection` (taken before the seeds and templates are
    propagated), and resolving a resolved config, or its dump, keeps it and everything else."""
    import pipeline.config as C
    from pipeline.common.hashing import canonical_json, sha256_text

    projections: list[dict] = []
    real = C.data_projection
    monkeypatch.setattr(
        C, "data_projection", lambda cfg: projections.append(real(cfg)) or projections[-1]
    )
    cfg = C.resolve_run_config(DEMO)
    assert len(projections) == 1
    assert cfg.build_id == "b_" + sha256_text(canonical_json(projections[0]))[:12]
    assert C.resolve_run_config(cfg) is cfg  # resolved already: not validated again
    again = C.resolve_run_config(cfg.model_dump(mode="json"))
    assert len(projections) == 1  # the dump carries its id: not hashed again
    assert again.build_id == cfg.build_id
    assert again.model_dump(mode="json") == cfg.model_dump(mode="json")


def test_limit_enters_the_build_id() -> None:
    """--limit (`ingest.limit_per_source`) goes in before validation: the same id as a file
    that says so. --engine goes in after: the same id as without it."""
    import yaml

    from pipeline.config import resolve_run_config

    full = resolve_run_config(DEMO)
    limited = resolve_run_config(DEMO, overrides={"ingest.limit_per_source": 2})
    assert limited.ingest.limit_per_source == 2 and limited.build_id != full.build_id
    assert limited.assemble.build_id == limited.build_id  # propagated from the new id
    raw = yaml.safe_load(DEMO.read_text())
    raw["ingest"] = {**(raw.get("ingest") or {}), "limit_per_source": 2}
    assert resolve_run_config(raw).build_id == limited.build_id
    engine = "process" if full.sandbox.engine != "process" else "docker"
    other = resolve_run_config(DEMO, engine=engine)
    assert other.sandbox.engine == engine and other.build_id == full.build_id
    assert resolve_run_config(DEMO).sandbox.engine == full.sandbox.engine  # nothing mutated
