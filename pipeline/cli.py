"""`aletheia`: the command line. Each stage package contributes its commands via `register(app)`."""

from __future__ import annotations

import typer

import flows.cli
import pipeline.instances.cli
import pipeline.models.cli
import pipeline.problems.cli
import pipeline.publish.cli
import pipeline.sampling.cli
import pipeline.train.cli

app = typer.Typer(
    name="aletheia",
    help="Execution-grounded training data for code verifiers: build, publish, train, evaluate.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)

# In the order they appear in --help: the stages in data-flow order, then the flows.
for module in (
    pipeline.problems.cli,  # problems ingest | split
    pipeline.models.cli,  # fit-policy (tiny local policies)
    pipeline.sampling.cli,  # sample, judge
    pipeline.instances.cli,  # assemble, adversarial, dpo
    pipeline.train.cli,  # train, evaluate
    pipeline.publish.cli,  # publish
    flows.cli,  # build-train, build-eval (the flows, run without a server)
):
    module.register(app)

if __name__ == "__main__":
    app()
