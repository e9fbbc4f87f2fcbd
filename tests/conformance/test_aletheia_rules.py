"""Conformance: Aletheia's exact prompt on demand, and Aletheia's rules in the reproduction
configs (docs/aletheia-conformance.md rows AP1-AP4 and AR1-AR5).

Aletheia's code, as read (insait-institute/aletheia, `src/`):

- `prompts.py` (b1dfd31): the verifier prompts are module-level string constants,
  `LIST_REWARD_PROMPT` (the Think user turn: `{question}`, `{candidates}`, `{valid_options}`,
  literal braces doubled, a leading and a trailing newline; used `.format(...).strip()`) and
  `LIST_REWARD_PROMPT_COT` (the Instruct system turn, `{valid_options}`, used verbatim);
  `cerebrm_prompts.py` holds the cerebrm-era `LIST_REWARD_PROMPT`, which asks for
  `\\boxed{[[X]]}`. `evaluate_ckpt.py` (003feb8) writes the Instruct user turn inline, an
  f-string of `example['query']` and `candidate_str` in `_create_prompts_instruct`;
- `evaluate_ckpt.py`: the answer is the first `\\boxed{}` of the whole completion;
- `cerebrm_datagen.py` (a1c88fa) and `listwise_eval_sets.py` (1431408): the query is
  `description.split("\\nExample\\n")[0].split("\\nExamples\\n")[0].strip()`;
- `rq4_datagen.py`: Adv's `modification` labels (`authority_bias_rejected`, ...);
- `rewards.py` `list_format_reward` accepts `\\boxed{A}` only, `cerebrm_rewards.py`'s
  `\\boxed{[[A]]}` only: each the form its prompt asked for.

The stand-in checkout (tests/conformance/aletheia_standin.py) has the shape of those files
in our own words. Expected values are written out by hand.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from pipeline.common.aletheia_prompts import aletheia_problem, read_aletheia_prompts
from pipeline.common.verifier_prompt import PromptSpec, build_messages, wording, wording_line
from tests.conformance.aletheia_standin import (
    EVALUATE,
    SYSTEM,
    THINK_BRACKETED,
    write_checkout,
)

REPO = Path(__file__).resolve().parents[2]
ARGS = ("Add two numbers.", ["print(3)\n", "print(4)"], ["python", "python"])
BLOCKS = (
    "[CANDIDATE_A]\n```python\nprint(3)\n\n```\n[/CANDIDATE_A]\n\n"
    "[CANDIDATE_B]\n```python\nprint(4)\n```\n[/CANDIDATE_B]"
)
# The stand-in's three turns for ARGS, written out by hand.
THINK_TURN = (
    "You review programs written for a coding task. Exactly one of them is right.\n\n"
    "[QUESTION]\nAdd two numbers.\n[/QUESTION]\n\n" + BLOCKS + "\n\n"
    "Choose among: A, B. Put your choice in \\boxed{X} and nothing after it."
)
SYSTEM_TURN = (
    "\nYou review programs written for a coding task. Exactly one of them is right.\n"
    "Choose among: A, B. Write:\nReasoning: <your steps>\nVerdict: \\boxed{X}\n"
)
INSTRUCT_USER_TURN = (
    "The task and its programs:\n[QUESTION]\nAdd two numbers.\n[/QUESTION]\n\n" + BLOCKS + "\n\n"
    "Keep to the format {exactly}."
)


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in checkout; the working directory is a fresh folder, where the stand-in's
    files would write `IMPORTED` if they were ever run."""
    read_aletheia_prompts.cache_clear()
    monkeypatch.chdir(tmp_path)
    return write_checkout(tmp_path / "aletheia")


def _never_run(where: Path) -> None:
    assert not (where / "IMPORTED").exists()
    assert "never_installed_module" not in sys.modules


# -- AP1: the exact prompt, read from the user's checkout ----------------------------------


def test_ap1_aletheias_wording_is_read_from_the_checkout_never_run(checkout: Path) -> None:
    spec = PromptSpec(aletheia_src=str(checkout))
    assert build_messages(*ARGS, spec) == [
        {"role": "user", "content": THINK_TURN},  # .format(...).strip()
        {"role": "assistant", "content": "<think>\n"},
    ]
    instruct = build_messages(*ARGS, PromptSpec(style="instruct", aletheia_src=str(checkout)))
    assert instruct == [
        {"role": "system", "content": SYSTEM_TURN},  # verbatim, edge newlines kept
        {"role": "user", "content": INSTRUCT_USER_TURN},  # the f-string, its {{ }} literal
    ]
    # a prompt file named directly (the cerebrm-era one asks for the bracketed box)
    write_checkout(checkout, think=THINK_BRACKETED, prompt_file="cerebrm_prompts.py")
    file_spec = PromptSpec(aletheia_src=str(checkout / "src" / "cerebrm_prompts.py"))
    assert build_messages(*ARGS, file_spec)[0]["content"] == THINK_TURN.replace(
        "\\boxed{X}", "\\boxed{[[X]]}"
    )
    _never_run(checkout.parent)
    # one wording or the other: a template beside the checkout is refused
    with pytest.raises(ValueError, match="give one or the other"):
        PromptSpec(aletheia_src=str(checkout), template="user.txt")


def test_ap1_without_the_instruct_f_string_the_user_turn_is_ours_and_said_so(
    checkout: Path,
) -> None:
    from pipeline.common.verifier_prompt import INSTRUCT_USER_TEMPLATE

    (checkout / "src" / "evaluate_ckpt.py").write_text("def other():\n    return 1\n")
    spec = PromptSpec(style="instruct", aletheia_src=str(checkout))
    system, user = build_messages(*ARGS, spec)
    assert system["content"] == SYSTEM_TURN
    assert user["content"].startswith(INSTRUCT_USER_TEMPLATE.split("\n")[0])
    record = wording(spec)
    assert record["instruct_user"] == "project"
    assert "its Instruct user turn: the project's" in wording_line(record)


def test_ap1_every_verifier_prompt_honours_it(checkout: Path, tmp_path: Path) -> None:
    """The run config hands it to assembly's cap, DPO's rows and the evaluation after
    publish; evaluation, GRPO / DPO / SFT / RAFT / STaR / ReST-EM training and the zoo and
    ablation cells take it from their own configs."""
    from pipeline.config import resolve_run_config
    from pipeline.evaluate.config import EvalConfig
    from pipeline.evaluate.runner import eval_requests
    from pipeline.train import TrainConfig
    from pipeline.train.ablation import eval_config, train_config
    from pipeline.train.ablation_config import AblationConfig
    from pipeline.train.data import preference_rows
    from pipeline.train.raft import requests
    from pipeline.train.recipes import cell_config, grid
    from tests.train.rowgen import instances

    src = str(checkout)
    run = resolve_run_config(
        REPO / "configs" / "demo.yaml",
        overrides={"aletheia_src": src, "evaluate.model": "m"},
    )
    assert run.assemble.aletheia_src == run.dpo.aletheia_src == src
    assert run.evaluate is not None and run.evaluate.aletheia_src == src
    think = [{"role": "user", "content": THINK_TURN}, {"role": "assistant", "content": "<think>\n"}]
    assert build_messages(*ARGS, run.dpo.prompt_spec("think")) == think

    row = instances("heldout")[0]
    ours = build_messages(row["query"], row["candidates"], row["candidate_languages"])
    theirs = build_messages(
        row["query"], row["candidates"], row["candidate_languages"], PromptSpec(aletheia_src=src)
    )
    assert theirs[0]["content"].startswith("You review programs written")
    assert ours != theirs
    # evaluation
    req = eval_requests([row], "heldout", EvalConfig(aletheia_src=src, pairwise=False))[0]
    assert req.messages == theirs
    # training: RAFT (STaR and ReST-EM sample through the same requests) and GRPO's spec
    cfg = TrainConfig.model_validate(
        {"method": "raft", "model": "m", "output_dir": tmp_path / "run",
         "data": {"dir": tmp_path, "config": "train"}, "prompt": {"aletheia_src": src}}
    )  # fmt: skip
    assert requests([row], cfg, 0)[0].messages == theirs
    # DPO / SFT train on the published prompt: with the wording named, a row must be in it
    dpo_row = _dpo_row(row, theirs)
    assert preference_rows(pa.Table.from_pylist([dpo_row]), cfg.prompt.spec())[0]["prompt"] == [
        theirs[0]
    ]
    with pytest.raises(ValueError, match="prompt.aletheia_src"):
        preference_rows(pa.Table.from_pylist([_dpo_row(row, ours)]), cfg.prompt.spec())
    # a zoo cell (`--set prompt.aletheia_src=...`) and an ablation cell (its `train:`)
    cell = next(c for c in grid() if c.recipe == "grpo-think")
    zoo = cell_config(cell, overrides={"prompt": {"aletheia_src": src}})
    assert zoo.prompt.spec().aletheia_src == src
    from tests.train.rowgen import write_dataset

    data = write_dataset(tmp_path / "data")
    ablation = AblationConfig.model_validate(
        {"out_dir": tmp_path / "ab", "data_dir": data, "size": "7b",
         "train": {"prompt": {"aletheia_src": src}}}
    )  # fmt: skip
    assert train_config(ablation, "dpo-think").prompt.aletheia_src == src
    assert eval_config(ablation, "grpo-instruct").aletheia_src == src  # asked as it trained
    _never_run(checkout.parent)


def _dpo_row(row: dict[str, Any], messages: list[dict[str, str]]) -> dict[str, Any]:
    return row | {
        "prompt": [messages[0]],
        "chosen": [{"role": "assistant", "content": "<think>\nx\n</think>\n\\boxed{A}"}],
        "rejected": [{"role": "assistant", "content": "<think>\ny"}],
        "prompt_variant": "think",
    }


def test_ap1_assembly_measures_the_cap_on_aletheias_prompts(
    checkout: Path, tiny_model_dir: Path
) -> None:
    from pipeline.instances.tokens import TokenCounter

    counter = TokenCounter(str(tiny_model_dir))
    texts = counter.prompt_texts(*ARGS, aletheia_src=str(checkout))
    assert THINK_TURN in texts[0] and texts[0].endswith("<think>\n")
    assert SYSTEM_TURN in texts[1] and INSTRUCT_USER_TURN in texts[1]
    assert counter.prompt_tokens(*ARGS, aletheia_src=str(checkout)) == max(
        counter.count_texts(texts)
    )


def test_ap1_the_build_id_follows_the_wording_not_the_path(checkout: Path, tmp_path: Path) -> None:
    from pipeline.config import load_run_config, resolve_run_config

    demo = REPO / "configs" / "demo.yaml"
    ours = load_run_config(demo)
    theirs = resolve_run_config(demo, overrides={"aletheia_src": str(checkout)})
    elsewhere = write_checkout(tmp_path / "copy")  # the same bytes at another path
    moved = resolve_run_config(demo, overrides={"aletheia_src": str(elsewhere)})
    assert ours.build_id == "b_4eb5efc69167"  # the demo's, unchanged: the key is left out
    assert "aletheia_src" not in ours.model_dump(mode="json")
    assert theirs.build_id != ours.build_id
    assert moved.build_id == theirs.build_id
    read_aletheia_prompts.cache_clear()
    write_checkout(elsewhere, system=SYSTEM.replace("Reasoning", "Thoughts"))
    edited = resolve_run_config(demo, overrides={"aletheia_src": str(elsewhere)})
    assert edited.build_id != theirs.build_id


# -- AP2: preflight says, in one line, what is missing -------------------------------------


@pytest.mark.parametrize(
    "edit,line",
    [
        ("no_file", r"src/prompts\.py: no such file$"),
        ("absent", r"src/prompts\.py: constant LIST_REWARD_PROMPT absent$"),
        ("not_string", r"src/prompts\.py: LIST_REWARD_PROMPT is not a string literal \(a Call"),
        ("placeholder", (r"placeholder mismatch: .*LIST_REWARD_PROMPT: missing placeholder\(s\) "
         r"\['candidates'\]$")),
        ("unknown", (r"placeholder mismatch: .*LIST_REWARD_PROMPT: unknown placeholder\(s\) "
         r"\['questoin'\]")),
        ("fstring", r"_create_prompts_instruct: unexpected f-string field \{example\['title'\]\}"),
    ],
)  # fmt: skip
def test_ap2_what_is_missing_is_one_line(checkout: Path, edit: str, line: str) -> None:
    prompts = checkout / "src" / "prompts.py"
    text = prompts.read_text()
    if edit == "no_file":
        prompts.unlink()
    elif edit == "absent":
        prompts.write_text(text.replace("LIST_REWARD_PROMPT =", "OTHER_PROMPT_2 ="))
    elif edit == "not_string":
        prompts.write_text(text.replace('LIST_REWARD_PROMPT = """', 'LIST_REWARD_PROMPT = str("""'
                                        ).replace('"""\n\nLIST_REWARD_PROMPT_COT', '""")\n\n'
                                                  'LIST_REWARD_PROMPT_COT'))  # fmt: skip
    elif edit == "placeholder":
        prompts.write_text(text.replace("{candidates}\n\nChoose", "Choose"))
    elif edit == "unknown":
        prompts.write_text(text.replace("{question}", "{questoin}"))
    else:
        (checkout / "src" / "evaluate_ckpt.py").write_text(
            EVALUATE.replace("{example['query']}", "{example['title']}")
        )
    problem = aletheia_problem("prompt.aletheia_src", str(checkout), ("think", "instruct"))
    assert problem is not None and "\n" not in problem
    assert problem.startswith("prompt.aletheia_src: ")
    assert __import__("re").search(line, problem), problem


def test_ap2_a_file_without_the_instruct_system_turn_serves_think_only(
    checkout: Path, tiny_model_dir: Path
) -> None:
    """The stored cerebrm_prompts.py has no LIST_REWARD_PROMPT_COT: its Think prompt is
    used, an Instruct prompt asked of it is one line naming the constant, and assembly's cap
    measures the Think prompt only (as Aletheia's own cap measured Think-style prompts)."""
    from pipeline.instances.tokens import TokenCounter, measured_styles

    prompts = checkout / "src" / "prompts.py"
    prompts.write_text(prompts.read_text().replace("LIST_REWARD_PROMPT_COT =", "OTHER_COT ="))
    src = str(checkout)
    assert aletheia_problem("dpo.aletheia_src", src) is None  # Think: fine
    assert aletheia_problem("evaluate.aletheia_src", src, ("instruct",)) == (
        f"evaluate.aletheia_src: {checkout}/src/prompts.py: constant LIST_REWARD_PROMPT_COT "
        "absent (the Instruct system turn)"
    )
    assert build_messages(*ARGS, PromptSpec(aletheia_src=src))[0]["content"] == THINK_TURN
    with pytest.raises(ValueError, match="LIST_REWARD_PROMPT_COT absent"):
        build_messages(*ARGS, PromptSpec(style="instruct", aletheia_src=src))
    assert measured_styles(src) == ("think",)
    counter = TokenCounter(str(tiny_model_dir))
    [think] = counter.prompt_texts(*ARGS, aletheia_src=src)
    assert THINK_TURN in think
    many = counter.prompt_tokens_many([ARGS, ARGS], aletheia_src=src)
    assert many == counter.count_texts([think, think])


def test_ap2_preflight_dry_run_and_the_commands_report_it(checkout: Path, tmp_path: Path) -> None:
    from pipeline.common.stage import CheckContext
    from pipeline.config import resolve_run_config
    from pipeline.errors import UserError
    from pipeline.evaluate.cli import check_templates
    from pipeline.evaluate.config import EvalConfig
    from pipeline.instances.config import AssembleConfig
    from pipeline.instances.dpo.checks import check_dpo
    from pipeline.instances.dpo.config import DPOConfig
    from pipeline.instances.prompt_checks import check_assemble

    (checkout / "src" / "prompts.py").write_text("LIST_REWARD_PROMPT = 1\n")
    src = str(checkout)
    ctx = CheckContext(built={}, docker=False, facts={})
    [finding] = check_assemble(AssembleConfig(aletheia_src=src), ctx)
    assert finding.fatal and finding.message.endswith("LIST_REWARD_PROMPT is not a string "
                                                      "literal (a Constant expression)")  # fmt: skip
    with pytest.raises(UserError, match="aletheia_src: .*not a string literal"):
        check_templates("", EvalConfig(aletheia_src=src))  # `aletheia evaluate`, `train`
    from pipeline.evaluate.stage import EVALUATE, EvaluateCall

    call = EvaluateCall(model="m", hub_dir=tmp_path, aletheia_src=src,
                        backend={"type": "openai", "base_url": "http://127.0.0.1:9/v1"})  # fmt: skip
    found = EVALUATE.check(call, ctx)  # the evaluation after publish (its server probed too)
    [after_publish] = [f for f in found if "aletheia_src" in f.message]
    assert after_publish.message.startswith("evaluate.aletheia_src: ")
    # a run config (what `build-train --dry-run` reads) names the key and the fault
    run_yaml = tmp_path / "run.yaml"
    run_yaml.write_text(yaml.safe_dump({"aletheia_src": src}))
    with pytest.raises(UserError, match=r"run\.yaml: .*aletheia_src: .*not a string literal"):
        resolve_run_config(run_yaml)
    # Aletheia's cerebrm-era prompt asks for \boxed{[[X]]}: a letter build is told so
    read_aletheia_prompts.cache_clear()
    write_checkout(checkout, think=THINK_BRACKETED)
    found = check_dpo(DPOConfig(aletheia_src=src), ctx)
    assert [f.message for f in found] == [
        (
            f"dpo.aletheia_src: {checkout}/src/prompts.py: LIST_REWARD_PROMPT asks for "
            "\\boxed{[[X]]} but the answers are `letter` (\\boxed{X}): set "
            "publish.answer_format: bracketed, or use the prompt file that asks for the published "
            "form"
        )
    ]
    assert check_dpo(DPOConfig(aletheia_src=src, answer_format="bracketed"), ctx) == []


# -- AP3: the card and the reports name the wording ----------------------------------------


def test_ap3_the_card_names_the_wording(checkout: Path) -> None:
    from pipeline.publish.card import prompt_wording_md

    sha = read_aletheia_prompts(str(checkout)).sha256
    assert prompt_wording_md({"dpo": {"aletheia_src": str(checkout)}}) == (
        f"Verifier prompt: Aletheia's wording, read from {checkout}/src/prompts.py "
        f"(sha256 {sha[:16]})."
    )
    assert prompt_wording_md({"dpo": {}}) == (
        "Verifier prompt: the project's own wording (pipeline/common/verifier_prompt.py)."
    )
    gone = prompt_wording_md({"aletheia_src": "/nowhere/aletheia"})
    assert gone == (
        "Verifier prompt: read from /nowhere/aletheia (not readable where this card was written)."
    )


def test_ap3_evaluation_and_training_reports_name_the_wording(
    checkout: Path, tmp_path: Path, tiny_model_dir: Path
) -> None:
    from pipeline.evaluate.config import EvalConfig
    from pipeline.evaluate.run import evaluate
    from tests.train.rowgen import write_dataset

    data = write_dataset(tmp_path / "data")
    cfg = EvalConfig(
        splits=["heldout"], k=1, limit=2, pairwise=False, max_new_tokens=8,
        constrain_answer=True, aletheia_src=str(checkout), progress=False,
        backend={"type": "transformers", "device": "cpu"},
    )  # fmt: skip
    report = evaluate(tiny_model_dir, data, tmp_path / "eval", cfg)
    sha = read_aletheia_prompts(str(checkout)).sha256
    expected = {"wording": "aletheia", "source": f"{checkout}/src/prompts.py", "sha256": sha}
    assert report["prompt"] == expected
    assert json.loads((tmp_path / "eval" / "report.json").read_text())["prompt"] == expected
    md = (tmp_path / "eval" / "report.md").read_text()
    assert f"Aletheia's wording, read from {checkout}/src/prompts.py (sha256 {sha[:16]})" in md
    gen = json.loads((tmp_path / "eval" / "responses.generation.json").read_text())
    assert gen["prompt_wording"] == expected  # travels with the responses
    # the training summary records it (pipeline/train/run.py)
    from pipeline.train import TrainConfig

    tcfg = TrainConfig.model_validate(
        {"method": "sft", "model": "m", "output_dir": tmp_path / "t",
         "data": {"dir": data, "config": "dpo"}, "prompt": {"aletheia_src": str(checkout)}}
    )  # fmt: skip
    assert wording(tcfg.prompt.spec()) == expected


# -- AR1: evaluation reads the first box in the reproduction configs -----------------------


def test_ar1_full_size_ablations_evaluate_with_aletheias_first_box(tmp_path: Path) -> None:
    from pipeline.train.ablation import eval_config
    from pipeline.train.ablation_config import AblationConfig
    from tests.train.rowgen import write_dataset

    data = write_dataset(tmp_path / "data")
    for size in ("1.5b", "7b", "14b"):
        cfg = AblationConfig.from_yaml(REPO / "configs" / "ablation" / f"{size}.yaml")
        cfg = cfg.model_copy(update={"data_dir": data})
        assert eval_config(cfg, "grpo-think").answer_rule == "first_box"
    demo = AblationConfig.from_yaml(REPO / "configs" / "ablation" / "demo.yaml")
    assert eval_config(demo.model_copy(update={"data_dir": data}), "grpo-think").answer_rule == (
        "after_think"  # the demo keeps the training reward's rule
    )


# -- AR2: Aletheia's statement cut -----------------------------------------------------------


STATEMENT = (
    "You are given n numbers.\nExamples of inputs follow the rules below.\n\n"
    "Input\nOne line.\nExample\n3\nOutput\n6\nNote\nThe sum is 6.\nExamples\nmore\n"
)


def test_ar2_aletheias_statement_cut_by_hand() -> None:
    from pipeline.instances.assemble import aletheia_statement_cut

    # everything from the first "\nExample\n" line is dropped, then stripped; a line that
    # only starts with "Examples" is kept (the split is on the whole line)
    assert aletheia_statement_cut(STATEMENT) == (
        "You are given n numbers.\nExamples of inputs follow the rules below.\n\nInput\nOne line."
    )
    assert aletheia_statement_cut("Sum.\nExamples\n1 2\n") == "Sum."
    assert aletheia_statement_cut("  No samples here.  ") == "No samples here."
    # the project's heading cut drops each sample section only up to the next known
    # heading, so the note after the example stays
    from pipeline.problems.config import NormalizeConfig
    from pipeline.problems.normalize import prompt_statement

    assert prompt_statement(STATEMENT, NormalizeConfig()) == (
        "You are given n numbers.\nExamples of inputs follow the rules below.\n\n"
        "Input\nOne line.\nNote\nThe sum is 6."
    )


def test_ar2_the_cut_is_an_option_the_full_build_takes(tmp_path: Path) -> None:
    import polars as pl

    from pipeline.config import load_run_config
    from pipeline.instances.assemble import _as_instance_lists
    from pipeline.instances.config import AssembleConfig

    problems = pl.DataFrame(
        {"problem_id": ["p"], "source": ["s"], "statement": [STATEMENT],
         "prompt_statement": ["the project's cut"]}
    )  # fmt: skip
    inst = pl.DataFrame(
        {"problem_id": ["p"], "code": [["a", "b"]], "candidate_id": [["1", "2"]],
         "origin": [["policy"] * 2], "generator": [["g"] * 2], "language": [["python"] * 2],
         "verdict": [["AC", "WA"]], "pass_rate": [[1.0, 0.0]]}
    )  # fmt: skip
    assert _as_instance_lists(inst, problems)["query"].to_list() == ["the project's cut"]
    cut = _as_instance_lists(inst, problems, "aletheia")["query"].to_list()
    assert cut == [("You are given n numbers.\nExamples of inputs follow the rules below.\n\n"
                   "Input\nOne line.")]  # fmt: skip
    assert AssembleConfig().statement_cut == "headings"
    assert "statement_cut" not in AssembleConfig().model_dump()  # the demo's keys unchanged
    full = load_run_config(REPO / "configs" / "aletheia-full.yaml")
    assert full.assemble.statement_cut == "aletheia"
    assert load_run_config(REPO / "configs" / "demo.yaml").assemble.statement_cut == "headings"


# -- AR3: Adv's modification labels ------------------------------------------------------------


def test_ar3_modification_labels_at_publish(tmp_path: Path) -> None:
    from pipeline.config import load_run_config
    from pipeline.publish.config import PublishConfig
    from pipeline.publish.labels import with_modification_labels

    table = pa.table(
        {"modification": ["authority", "reverse_authority", "misleading_descriptive",
                          "egocentric", None],
         "x": [1, 2, 3, 4, 5]}
    )  # fmt: skip
    out = with_modification_labels(table, "aletheia")
    assert out.column("modification").to_pylist() == [
        "authority_bias_rejected",
        "reverse_authority_bias_chosen",
        "misleading_comments_chosen",
        "egocentric",  # not in Aletheia's Adv set: our name
        None,
    ]
    assert with_modification_labels(table, "project").equals(table)
    assert with_modification_labels(pa.table({"x": [1]}), "aletheia").num_columns == 1
    assert "modification_labels" not in PublishConfig().model_dump()  # the demo's card
    assert load_run_config(REPO / "configs" / "demo.yaml").publish.modification_labels == (
        "project"
    )
    full = load_run_config(REPO / "configs" / "aletheia-full.yaml")
    assert full.publish.modification_labels == "aletheia"


def test_ar3_a_published_adv_config_carries_aletheias_labels(tmp_path: Path) -> None:
    """The publish stage on a synthetic build: Adv rows go out under Aletheia's labels; the
    build's own table keeps our names."""
    from pipeline.publish.config import PublishConfig
    from pipeline.publish.stage import build_hub_folder
    from tests.publish.synthetic import make_build, rewrite

    build = make_build(tmp_path / "build")
    types = ["authority", "reverse_authority", "fake_reference"]

    def label(rows: list[dict]) -> list[dict]:
        return [r | {"modification": types[i % 3]} for i, r in enumerate(rows)]

    rewrite(build, "adv", label)
    hub = tmp_path / "hub"
    build_hub_folder(build, hub, PublishConfig(modification_labels="aletheia"))
    for split in ("test", "full"):
        adv = pq.read_table(next((hub / "adv").glob(f"{split}-*.parquet")))
        assert set(adv.column("modification").to_pylist()) == {
            "authority_bias_rejected",
            "reverse_authority_bias_chosen",
            "authority_reference_rejected",
        }
    assert set(
        pq.read_table(build / "final" / "adv.parquet").column("modification").to_pylist()
    ) == (set(types))


# -- AR4: the published answer form reaches evaluation and every recipe ----------------------


def _bracketed(data: Path) -> Path:
    """`data` with every answer column in Aletheia's `[[A]]` form (publish's rewrite)."""
    from pipeline.publish.answer_format import with_answer_format
    from schemas.dataset_configs import CONFIG_BY_NAME

    for path in data.glob("*/*.parquet"):
        name = path.parent.name
        table = with_answer_format(pq.read_table(path), CONFIG_BY_NAME[name].kind, "bracketed")
        pq.write_table(table, path)
    return data


def test_ar4_the_format_reward_takes_only_the_asked_form() -> None:
    from pipeline.train.rewards import format_reward, make_reward_funcs

    letter, bracketed = "<think>\nr\n</think>\n\\boxed{B}", "<think>\nr\n</think>\n\\boxed{[[B]]}"
    # rewards.py: \boxed{B} only; cerebrm_rewards.py: \boxed{[[B]]} only
    assert [format_reward(t, 2, "think", 1.0, "letter") for t in (letter, bracketed)] == [0, -1]
    assert [format_reward(t, 2, "think", 1.0, "bracketed") for t in (letter, bracketed)] == [-1, 0]
    fmt = make_reward_funcs(
        ["format"], style="instruct", budget=64, overlong_buffer=16, answer_format="bracketed"
    )[0]
    assert fmt(completions=["Final: \\boxed{B}", "Final: \\boxed{[[B]]}"], num_candidates=[2, 2]) == [
        -1.0, 0.0]  # fmt: skip


def test_ar4_evaluation_and_training_ask_for_the_published_form(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    from pipeline.config import resolve_run_config
    from pipeline.evaluate.config import EvalConfig
    from pipeline.evaluate.runner import eval_requests
    from pipeline.train import TrainConfig
    from pipeline.train.raft import requests
    from pipeline.train.verifier import build_grpo, rows_and_spec
    from tests.train.rowgen import write_dataset

    data = _bracketed(write_dataset(tmp_path / "data"))
    rows = pq.read_table(next((data / "heldout").glob("*.parquet"))).to_pylist()
    assert rows[0]["chosen_answer"].startswith("[[")
    # evaluation: the prompt and constrained decoding in the rows' form
    req = eval_requests(rows[:1], "heldout", EvalConfig(constrain_answer=True, pairwise=False))[0]
    assert "\\boxed{[[X]]}" in req.messages[0]["content"]
    assert req.answer_choices == ["[[A]]", "[[B]]", "[[C]]"]
    # ... and a run config hands publish's form to the evaluation after publish
    run = resolve_run_config(
        REPO / "configs" / "demo.yaml", overrides={"publish.answer_format": "bracketed"}
    )
    assert run.evaluate is not None and run.evaluate.answer_format == "bracketed"
    # RAFT, STaR and ReST-EM sample with the rows' form, constrained to it
    base = {"model": str(tiny_model_dir), "output_dir": tmp_path / "run"}
    raft = TrainConfig.model_validate(
        base | {"method": "raft", "data": {"dir": data, "config": "train"},
                "raft": {"constrain_answer": True}}
    )  # fmt: skip
    train_rows = pq.read_table(next((data / "train").glob("*.parquet"))).to_pylist()
    r = requests(train_rows[:1], raft, 0)[0]
    assert "\\boxed{[[X]]}" in r.messages[0]["content"]
    assert r.answer_choices == ["[[A]]", "[[B]]", "[[C]]"]
    # GRPO: the trainer's prompts ask for it and its format reward takes only it
    grpo = TrainConfig.model_validate(
        base | {"method": "grpo", "data": {"dir": data, "config": "train", "limit": 4},
                "optim": {"use_cpu": True, "bf16": False, "per_device_train_batch_size": 4,
                          "max_steps": 1},
                "grpo": {"num_generations": 4, "max_completion_length": 16,
                         "overlong_buffer": 8, "vllm": {"enabled": False}}}
    )  # fmt: skip
    assert rows_and_spec(grpo)[1].answer_format == "bracketed"
    trainer = build_grpo(grpo, [])
    assert "\\boxed{[[X]]}" in trainer.train_dataset[0]["prompt"]
    fmt = next(f for f in trainer.reward_funcs if getattr(f, "__name__", "") == "format")
    done = ["r\n</think>\n\\boxed{A}", "r\n</think>\n\\boxed{[[A]]}"]
    assert fmt(completions=done, num_candidates=[3, 3], prefill=["<think>\n"] * 2) == [-1.0, 0.0]
    # the letter form where the config names it, whatever the rows
    named = TrainConfig.model_validate(
        base | {"method": "raft", "data": {"dir": data, "config": "train"},
                "prompt": {"answer_format": "letter"}}
    )  # fmt: skip
    assert "\\boxed{X}" in requests(train_rows[:1], named, 0)[0].messages[0]["content"]


def test_ar4_a_column_mixing_forms_is_refused() -> None:
    from pipeline.common.answers import column_answer_format

    assert column_answer_format(["A", "invalid", "C"]) == "letter"
    assert column_answer_format(["[[A]]", "invalid"]) == "bracketed"
    assert column_answer_format([]) == "letter"
    with pytest.raises(ValueError, match="chosen_answer: mixes"):
        column_answer_format(["A", "[[B]]"])


# -- AR5: the RLVR study's choices are ours --------------------------------------------------


def test_ar5_rlvr_configs_call_the_model_and_thinking_switch_our_choices() -> None:
    files = [
        *sorted((REPO / "configs" / "rlvr").glob("*.yaml")),
        REPO / "configs" / "train" / "rlvr_grpo.yaml",
        REPO / "configs" / "train" / "rlvr_gspo.yaml",
        REPO / "docs" / "rlvr-study.md",
        REPO / "docs" / "config-reference.md",
    ]
    for path in files:
        assert "paper's setting" not in path.read_text(), path
    llama = (REPO / "configs" / "rlvr" / "llama-3.2-1b.yaml").read_text()
    header = llama.split("name:")[0]
    assert "2605.30478's setting" not in header and "this project's choice" in header
    for name in ("demo", "qwen3-0.6b", "llama-3.2-1b"):
        text = (REPO / "configs" / "rlvr" / f"{name}.yaml").read_text()
        assert "enable_thinking: false" in text and "off is this project's choice" in text
