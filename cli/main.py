"""The ``peakopt`` command."""

from __future__ import annotations

import click

from peakopt.cli.common import Group, install, package_version
from peakopt.cli.generate import generate, prompt
from peakopt.cli.inputs import convert, schema, validate
from peakopt.cli.plot import plot
from peakopt.cli.report import report
from peakopt.cli.schedule import schedule_command
from peakopt.cli.score import plan_score_command, score
from peakopt.cli.solve import solve_command
from peakopt.cli.stress import stress


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_version(), prog_name="peakopt")
def cli() -> None:
    """Optimal schedules for agent tool workflows under resource limits.

    peakopt also scores any other schedule against the optimum.

    Inputs are peakopt JSON (workflow or suite), JSON Lines, PSPLIB .sm,
    Patterson .rcp, PeakBench contexts, or bundled:NAME (e.g. bundled:refund).
    """


# in the order of a user's loop: inputs, suites, schedules, scores
for command in (
    validate,
    convert,
    schema,
    generate,
    prompt,
    solve_command,
    schedule_command,
    score,
    plan_score_command,
    stress,
    report,
    plot,
):
    cli.add_command(command)


def main() -> None:
    """Entry point of the console script: Ctrl-C and SIGTERM stop a run cleanly."""
    install()
    cli()
