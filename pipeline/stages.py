"""The build, declared once: `GRAPH`, every stage run of build-aletheia-train in a valid
order, each node a `Stage`, its inputs bound to upstream outputs or files, its call(s) from
the run config, its output under the work dir (pipeline/common/graph.py).

Preflight and `--dry-run` (pipeline/preflight.py) check and plan it, node by node; the
Prefect flows (flows/build.py, a plain walk) and `aletheia stage NODE` (pipeline/executor.py)
run it, alike: a build made node by node publishes the same bytes. build-aletheia-eval runs
the nodes marked `evaluation` (Heldout, Strong, Hard: from assembly; Adv: bias edits on
Heldout's `test` split). The graph is closed at its end: the `manifest` node writes
build.json from the tables that ship, `publish` lays out the Hub folder from it, `push`
releases it (only with `hub.push`) and, when the run config has `evaluate:`, `evaluate`
scores its verifier on the published folder (its report outside the hub folder). Adding a
stage is its module plus one node here.

Work-dir layout (`<out_dir>/work/`):
  problems.parquet (+ .quarantine/.report)   splits/           candidates.parquet
  judged.parquet                             instances/        mixed/ adv/ dpo/ mixed_dpo/
  build.json (the manifest `publish` reads)  push.json (what `push` released)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pipeline
from pipeline.bestofn.stage import BEST_OF_N
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
from pipeline.policy_eval.stage import POLICY_EVAL
from pipeline.problems.stage import INGEST, IngestCall, ingest_inputs
from pipeline.publish.layout import list_files
from pipeline.publish.manifest import MANIFEST_STAGE, ManifestCall
from pipeline.publish.release import PUSH, PushCall
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
        ),
        Node(
            f"{section}-judge",
            JUDGE,
            lambda c: [JudgeCall(judge=getattr(c, section).judge, sandbox=c.sandbox)],
            lambda c, call: where(c, call) / "judged-edits.parquet",
            {"candidates": out(f"{section}-edits", "edits"), "problems": problems},
            evaluation=evaluation,
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
        ),
        Node(
            name,
            DPO_PAIRS,
            calls,
            lambda c, call: c.work_dir / table,
            {"instances": instances, "responses": gathered(f"{name}-responses")},
        ),
    ]


def _hub_files(hub: Path) -> list[Path]:
    """Every file of the published folder (what a push sends), in a stable order."""
    return [hub / rel for rel in list_files(hub)]


def _tiny(c: RunConfig) -> list[TinyModelCall]:
    return [] if c.tiny_model is None else [TinyModelCall(seed=c.tiny_model.seed)]


# Each published configuration: the node and output it ships (train_questions: below).
PUBLISHED = {
    "train": ("assemble", "train"),
    "dpo": ("dpo", "dpo"),
    "mixed": ("mixed", "mixed"),
    "mixed_dpo": ("mixed-dpo", "dpo"),
    **{name: ("assemble", name) for name in EVAL_SETS},
    "adv": ("adv", "adv"),
}
MANIFEST_TABLES = ("train", "train_questions", "dpo", "mixed", "mixed_dpo", *EVAL_SETS, "adv")


def _test_sets(c: RunConfig) -> list[str]:
    """The evaluation sets assembly writes a `test` table for (Adv has none of its own)."""
    with_test = {s.name for s in c.assemble.splits if s.has_test_split}
    return [name for name in EVAL_SETS if name in with_test]


def _seeds(c: RunConfig) -> dict[str, int]:
    seeds = {name: getattr(c, name).seed for name in ("splits", "assemble", "mixed", "adv", "dpo")}
    for i, source in enumerate(c.sample.sources):  # each candidate source has its own seed
        if getattr(source, "seed", None) is not None:
            seeds[f"sample.{i}.{source.kind}.{source.tier}"] = source.seed
    return seeds


def _manifest_call(c: RunConfig) -> ManifestCall:
    return ManifestCall(
        build_id=c.build_id,
        pipeline_version=pipeline.__version__,
        run_config=c.model_dump(mode="json"),
        seeds=_seeds(c),
        tables=list(MANIFEST_TABLES),
        test_tables=_test_sets(c),
    )


def _shipped(c: RunConfig, up: dict[str, Done]) -> list[str]:
    """The tables that ship, in MANIFEST_TABLES' order (with heldout_rule not_in_train,
    Train-Questions is assembly's copy, less the evaluation pool)."""
    questions = up["assemble"].outputs.get("train_questions") or up["splits"]["train_questions"]
    found = {name: up[node][output] for name, (node, output) in PUBLISHED.items()}
    return [questions if name == "train_questions" else found[name] for name in MANIFEST_TABLES]


def _manifest_inputs() -> dict[str, Bind]:
    nodes = tuple(dict.fromkeys(["splits", *(node for node, _ in PUBLISHED.values())]))
    return {
        "tables": Bind(nodes, _shipped),
        "test_tables": Bind(
            ("assemble",),
            lambda c, up: [up["assemble"][test_table_name(n)] for n in _test_sets(c)],
        ),
        "assignments": out("splits", "assignments"),
        "judged": out("judge", "judged"),
    }


def _push_calls(c: RunConfig) -> list[PushCall]:
    """The `hub:` section as PUSH's call when it pushes (no push: no node run)."""
    if not c.hub.push:
        return []
    hub = c.hub
    return [PushCall(folder=c.hub_dir, repo_id=hub.repo_id, tag=hub.tag,
                     endpoint=hub.endpoint, private=hub.private)]  # fmt: skip


def _evaluate_calls(c: RunConfig) -> list[EvaluateCall]:
    """The `evaluate:` section (none: no evaluation) as EVALUATE's call, on the hub folder."""
    if c.evaluate is None:
        return []
    section = c.evaluate.model_dump(exclude={"out_dir"})
    return [EvaluateCall.model_validate(section | {"hub_dir": c.hub_dir, "build": c.build_id})]


def _evaluate_input(name: str) -> Bind:
    """EVALUATE's inputs, found once publish has written them: the published split files
    it scores and the model folder's files."""
    return Bind(("publish",), lambda c, up: evaluate_inputs(_evaluate_calls(c)[0])[name])


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
        ),
        Node(
            "sample",
            SAMPLE,
            lambda c: [c.sample],
            lambda c, call: c.work_dir / "candidates.parquet",
            {"problems": outs("splits", ["train", "heldout"])},
            after=("fit-policy",),
            evaluation=True,
        ),
        Node(
            "judge",
            JUDGE,
            lambda c: [JudgeCall(judge=c.judge, sandbox=c.sandbox)],
            lambda c, call: c.work_dir / "judged.parquet",
            {"candidates": out("sample", "candidates"), "problems": out("ingest", "problems")},
            evaluation=True,
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
        # The tables that ship, named in build.json, which publish reads.
        Node(
            "manifest",
            MANIFEST_STAGE,
            lambda c: [_manifest_call(c)],
            lambda c, call: c.work_dir / "build.json",
            _manifest_inputs(),
        ),
        Node(
            "publish",
            PUBLISH,
            lambda c: [PublishCall(publish=publish_config(c))],
            lambda c, call: c.hub_dir,
            {
                "manifest": out("manifest", "manifest"),
                "tables": Bind(
                    ("manifest",),
                    lambda c, up: publish_inputs(Path(up["manifest"]["manifest"]).parent)["tables"],
                ),
            },
        ),
        # With hub.push: the published folder, one atomic commit on the Hub.
        Node(
            "push",
            PUSH,
            _push_calls,
            lambda c, call: c.work_dir / "push.json",
            {
                "hub": Bind(("publish",), lambda c, up: _hub_files(Path(up["publish"]["hub"]))),
                "manifest": out("manifest", "manifest"),
            },
        ),
        # After publish, outside the hub folder: the `evaluate:` section's verifier scored on
        # the published evaluation configs (no node run without the section).
        Node(
            "evaluate",
            EVALUATE,
            _evaluate_calls,
            lambda c, call: c.eval_dir,
            {name: _evaluate_input(name) for name in EVALUATE.inputs},
        ),
    ]
)

if tuple(n.name for n in GRAPH) != NODES:  # what `aletheia stage --help` lists
    raise RuntimeError(
        f"pipeline/node_names.py NODES {list(NODES)} differ from the graph's nodes "
        f"{[n.name for n in GRAPH]}: list them there too"
    )

# The nodes of a publish of an existing build (the publish-aletheia flow): the Hub folder
# and, with hub.push, its release.
RELEASE = ("publish", "push")

# Stages run outside the build graph through the same Prefect task and runner (a code
# policy's evaluation, in the RLVR study; Best-of-N).
OUTSIDE_GRAPH: dict[str, Stage[Any]] = {s.name: s for s in (POLICY_EVAL, BEST_OF_N)}
# Every stage by name (a Prefect task runs a stage by its name).
STAGES: dict[str, Stage[Any]] = {n.stage.name: n.stage for n in GRAPH} | OUTSIDE_GRAPH


def stage_named(name: str) -> Stage[Any]:
    """The stage of that name: in the graph as it is now (a test may add a node to it), or
    run outside it."""
    known = {n.stage.name: n.stage for n in GRAPH} | OUTSIDE_GRAPH
    if name not in known:
        raise KeyError(f"no stage {name!r}; known: {', '.join(sorted(known))}")
    return known[name]


def built_dirs(cfg: RunConfig) -> frozenset[Path]:
    """Folders the build makes before anything reads them: the fitted policies and the tiny
    model. A model reference naming one is not looked for on disk."""
    built = {Path(p.dir).expanduser().resolve() for p in cfg.policies}
    if cfg.tiny_model is not None:
        built.add(cfg.tiny_model.dir.resolve())
    return frozenset(built)
