"""The build, declared once: `GRAPH`, every stage run of build-aletheia-train in a valid
order, each node a `Stage`, its inputs bound to upstream outputs or files, its call(s) from
the run config, its output under the work dir (pipeline/common/graph.py).

Preflight and `--dry-run` (pipeline/preflight.py) check and plan it, node by node; the
Prefect flows (flows/build.py) and `aletheia stage NODE` (pipeline/executor.py) run it.
build-aletheia-eval runs the nodes marked `evaluation` (Heldout, Strong, Hard: from
assembly; Adv: bias edits on Heldout's `test` split). After publish, when the run config
has `evaluate:`, the `evaluate` node scores its verifier on the published folder (its
report outside the hub folder). Adding a stage is its module plus one node here.

Work-dir layout (`<out_dir>/work/`):
  problems.parquet (+ .quarantine/.report)   splits/           candidates.parquet
  judged.parquet                             instances/        mixed/ adv/ dpo/ mixed_dpo/
  build.json (the manifest `publish` reads; the flow writes it from the nodes' results)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.common.graph import Bind, Done, Graph, Node, files, gathered, out, outs
from pipeline.common.stage import Stage
from pipeline.config import RunConfig
from pipeline.evaluate.stage import EVALUATE, EvaluateCall, evaluate_inputs
from pipeline.instances.adversarial.stage import ADVERSARIAL, ADVERSARIAL_EDITS
from pipeline.instances.config import test_table_name
from pipeline.instances.dpo.stage import DPO_PAIRS, DPO_RESPONSES
from pipeline.instances.stage import ASSEMBLE, split_tables
from pipeline.judge.stage import JUDGE, JudgeCall
from pipeline.models.stage import FIT_POLICY, TINY_MODEL, TinyModelCall
from pipeline.node_names import NODES
from pipeline.problems.stage import INGEST, IngestCall, ingest_inputs
from pipeline.publish.stage import PUBLISH, PublishCall, publish_config, publish_inputs
from pipeline.sampling.stage import SAMPLE
from pipeline.splits.stage import SPLITS, SplitCall, split_inputs

EVAL_SETS = ("heldout", "strong", "hard")


def _ingest_call(c: RunConfig) -> IngestCall:
    return IngestCall(sources=c.sources, ingest=c.ingest, progress=False)


def _split_input(name: str) -> Bind:
    """SPLITS' inputs found beside the problems (the ingest quarantine, the benchmarks)."""

    def paths(c: RunConfig, up: dict[str, Done]) -> Any:
        found = split_inputs(
            Path(up["ingest"]["problems"]),
            c.splits,
            c.work_dir / "splits",
            ingest_quarantine=Path(up["ingest"]["quarantine"]),
        )
        return found[name]

    return Bind(("ingest",), paths)


def _assembly_splits(c: RunConfig, up: dict[str, Done]) -> list[Path]:
    # heldout_rule not_in_train: assembly reads Train-Questions too
    splits_dir = Path(up["splits"]["assignments"]).parent
    return split_tables(splits_dir, train_questions=c.assemble.eval_problems == "not_in_train")


def adversarial_source(section: str, instances: Done) -> str:
    """The table a bias-edit split is built from: Mixed from Train; Adv, as Aletheia's
    (`src/rq4_datagen.py` reads the listwise Heldout set's `test` split), from Heldout's
    `test` split (Heldout itself when the build has none)."""
    if section == "mixed":
        return instances["train"]
    return instances.outputs.get(test_table_name("heldout")) or instances["heldout"]


def _adversarial(section: str, evaluation: bool) -> list[Node]:
    """Bias edits planned, the edited programs re-judged as judge shards with the section's
    own judge settings, then the split from the plan and the judged table."""
    problems = out("ingest", "problems")
    source = Bind(("assemble",), lambda c, up: adversarial_source(section, up["assemble"]))
    where = lambda c, call: c.work_dir / section
    return [
        Node(
            f"{section}-edits",
            ADVERSARIAL_EDITS,
            lambda c: [getattr(c, section)],
            lambda c, call: where(c, call) / "edits",
            {"instances": source, "problems": problems},
            evaluation=evaluation,
            title=f"{section} edits",
        ),
        Node(
            f"{section}-judge",
            JUDGE,
            lambda c: [JudgeCall(judge=getattr(c, section).judge, sandbox=c.sandbox)],
            lambda c, call: where(c, call) / "judged-edits.parquet",
            {"candidates": out(f"{section}-edits", "edits"), "problems": problems},
            evaluation=evaluation,
            label=section,
            title=f"{section} re-judge",
            run_prefix=f"{section}-judge-shard",
            description=f"{section}: re-judging the bias-edited programs in the sandbox",
            show=lambda c: c.judge.progress,
        ),
        Node(
            section,
            ADVERSARIAL,
            lambda c: [getattr(c, section)],
            where,
            {
                "instances": source,
                "problems": problems,
                "judged_edits": outs(f"{section}-judge", ["judged"]),
            },
            evaluation=evaluation,
        ),
    ]


def _dpo(table: str, instances: Bind) -> list[Node]:
    """DPO pairs for one instance table (dpo | mixed_dpo: the table, its folder and the
    config's name; the nodes are named in the graph's one style, dpo | mixed-dpo): the
    verifier responses as shards placed like sampling, then one pairs run over every shard's
    responses. The demo's tiny model, which its judge loads, is built first."""
    name = table.replace("_", "-")
    calls = lambda c: [c.dpo.model_copy(update={"name": table})]
    return [
        Node(
            f"{name}-responses",
            DPO_RESPONSES,
            calls,
            lambda c, call: c.work_dir / table / "responses",
            {"instances": instances},
            after=("tiny-model",),
            label=name,
            title=f"{name} responses",
            description=f"{table}: verifier responses by shard",
        ),
        Node(
            name,
            DPO_PAIRS,
            calls,
            lambda c, call: c.work_dir / table,
            {"instances": instances, "responses": gathered(f"{name}-responses")},
        ),
    ]


def _tiny(c: RunConfig) -> list[TinyModelCall]:
    return [] if c.tiny_model is None else [TinyModelCall(seed=c.tiny_model.seed)]


def _publish_check(c: RunConfig) -> list[Any]:
    return [c.hub]  # what PUBLISH's check reads: whether and where to push


def _evaluate_calls(c: RunConfig) -> list[EvaluateCall]:
    """The `evaluate:` section (none: no evaluation) as EVALUATE's call, on the hub folder."""
    if c.evaluate is None:
        return []
    section = c.evaluate.model_dump(exclude={"out_dir"})
    return [EvaluateCall.model_validate(section | {"hub_dir": c.hub_dir})]


def _evaluate_input(name: str) -> Bind:
    """EVALUATE's inputs, found when it runs: the published split files it scores (the
    publish node, an `after`, has written them) and the model folder's files."""
    return Bind((), lambda c, up: evaluate_inputs(_evaluate_calls(c)[0])[name])


GRAPH = Graph(
    [
        Node(
            "ingest",
            INGEST,
            lambda c: [_ingest_call(c)],
            lambda c, call: c.work_dir / "problems.parquet",
            {"source_files": files(lambda c: ingest_inputs(_ingest_call(c))["source_files"])},
            evaluation=True,
        ),
        Node(
            "splits",
            SPLITS,
            lambda c: [SplitCall(splits=c.splits, progress=False)],
            lambda c, call: c.work_dir / "splits",
            {
                "problems": out("ingest", "problems"),
                "ingest_quarantine": _split_input("ingest_quarantine"),
                "benchmarks": _split_input("benchmarks"),
            },
            evaluation=True,
        ),
        # One fit per policy, side by side (runner.model_parallel); sampling reads their folders.
        Node(
            "fit-policy",
            FIT_POLICY,
            lambda c: c.policies,
            lambda c, spec: Path(spec.dir),
            {"problems": out("ingest", "problems")},
            evaluation=True,
            title=lambda c: "fit " + " + ".join(f.name for f in c.policies),
        ),
        Node(
            "sample",
            SAMPLE,
            lambda c: [c.sample],
            lambda c, call: c.work_dir / "candidates.parquet",
            {"problems": outs("splits", ["train", "heldout"])},
            after=("fit-policy",),
            evaluation=True,
            description="sampling candidates",
            show=lambda c: c.sample.progress,
        ),
        Node(
            "judge",
            JUDGE,
            lambda c: [JudgeCall(judge=c.judge, sandbox=c.sandbox)],
            lambda c, call: c.work_dir / "judged.parquet",
            {"candidates": out("sample", "candidates"), "problems": out("ingest", "problems")},
            evaluation=True,
            description="judging candidates in the sandbox",
            show=lambda c: c.judge.progress,
        ),
        # Before assembly: the demo measures Aletheia's token caps with its tokenizer.
        Node(
            "tiny-model",
            TINY_MODEL,
            _tiny,
            lambda c, call: c.tiny_model.dir,
            evaluation=True,
        ),
        Node(
            "assemble",
            ASSEMBLE,
            lambda c: [c.assemble],
            lambda c, call: c.work_dir / "instances",
            {
                "judged": out("judge", "judged"),
                "problems": out("ingest", "problems"),
                "splits": Bind(("splits",), _assembly_splits),
            },
            after=("tiny-model",),
            evaluation=True,
        ),
        *_adversarial("mixed", evaluation=False),
        *_dpo("dpo", Bind(("assemble",), lambda c, up: up["assemble"]["train"])),
        *_dpo("mixed_dpo", out("mixed", "mixed")),
        *_adversarial("adv", evaluation=True),
        # The manifest it reads (build.json) is written from the nodes' results by the flow.
        Node(
            "publish",
            PUBLISH,
            lambda c: [PublishCall(publish=publish_config(c))],
            lambda c, call: c.hub_dir,
            {
                "manifest": Bind((), lambda c, up: publish_inputs(c.work_dir)["manifest"]),
                "tables": Bind((), lambda c, up: publish_inputs(c.work_dir)["tables"]),
            },
            after=("mixed", "dpo", "mixed-dpo", "adv"),
            checked=_publish_check,
        ),
        # After publish, outside the hub folder: the `evaluate:` section's verifier scored on
        # the published evaluation configs (no node run without the section).
        Node(
            "evaluate",
            EVALUATE,
            _evaluate_calls,
            lambda c, call: c.eval_dir,
            {"splits": _evaluate_input("splits"), "model": _evaluate_input("model")},
            after=("publish",),
            description="evaluating the verifier on the published folder",
        ),
    ]
)

if tuple(n.name for n in GRAPH) != NODES:  # what `aletheia stage --help` lists
    raise RuntimeError(
        f"pipeline/node_names.py NODES {list(NODES)} differ from the graph's nodes "
        f"{[n.name for n in GRAPH]}: list them there too"
    )

# Every stage by name (a Prefect task runs a stage by its name).
STAGES: dict[str, Stage[Any]] = {n.stage.name: n.stage for n in GRAPH}


def stage_named(name: str) -> Stage[Any]:
    """The stage of that name in the graph as it is now (a test may add a node to it), else
    in STAGES (a stage registered to run through the fan-out without a node of its own)."""
    found = next((n.stage for n in GRAPH if n.stage.name == name), None) or STAGES.get(name)
    if found is None:
        raise KeyError(f"no stage {name!r}; known: {', '.join(sorted(STAGES))}")
    return found


def built_dirs(cfg: RunConfig) -> frozenset[Path]:
    """Folders the build makes before anything reads them: the fitted policies and the tiny
    model. A model reference naming one is not looked for on disk."""
    built = {Path(p.dir).expanduser().resolve() for p in cfg.policies}
    if cfg.tiny_model is not None:
        built.add(cfg.tiny_model.dir.resolve())
    return frozenset(built)
