"""`aletheia`: the command line. Each stage package contributes its commands via `register(app)`."""

from __future__ import annotations

import importlib
import logging

import typer

app = typer.Typer(
    name="aletheia",
    help="Execution-grounded training data for code verifiers: build, publish, train, evaluate.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)

# The stage packages that add commands, in the order they appear in --help.
COMMAND_MODULES = (
    "pipeline.problems.cli",  # problems ingest | split
    "pipeline.sampling.cli",  # sample, judge
    "pipeline.instances.cli",  # assemble, adversarial, dpo
    "pipeline.train.cli",  # train, evaluate
    "pipeline.publish.cli",  # publish
    "flows.cli",  # build-train, build-eval (the flows, run without a server)
)


def _register_all() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name is None or not name.startswith(e.name):  # a real missing dependency: say so
                raise
            logging.getLogger(__name__).debug("command module %s not present", name)
            continue
        module.register(app)


_register_all()

if __name__ == "__main__":
    app()
