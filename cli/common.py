"""What the commands share: input options, reading the inputs, warnings.

The group they run under (one ``Error:`` line, interrupts) is in
:mod:`peakopt.cli.group`, which imports nothing of this module: ``peakopt
--help`` must not pay for reading inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from peakopt.cli.options import grouped
from peakopt.instances.names import CPU_CHOICES, FORMATS

if TYPE_CHECKING:
    from peakopt.models import Suite

F = TypeVar("F", bound=Callable[..., Any])


def input_options(func: F) -> F:
    """Options that say how to read input files."""
    func = click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        help="Input format; detected from the extension or content by default.",
    )(func)
    func = click.option(
        "--cpu",
        type=click.Choice(CPU_CHOICES),
        default="peak",
        show_default=True,
        help="PeakBench contexts: which CPU figure becomes the cpu demand.",
    )(func)
    func = click.option(
        "--keep-dummies",
        is_flag=True,
        help="PSPLIB/Patterson: keep the dummy source and sink as zero-duration tasks.",
    )(func)
    return func


@dataclass(frozen=True)
class ReadOptions:
    """How to read the input files: the values of :func:`input_options`."""

    fmt: str | None
    cpu: str
    keep_dummies: bool

    def as_dict(self) -> dict[str, Any]:
        """The keyword arguments of :func:`peakopt.instances.load`, as ``targets`` takes them."""
        return {"format": self.fmt, "cpu": self.cpu, "keep_dummies": self.keep_dummies}


#: :func:`input_options`, reaching the command as ``read``, one :class:`ReadOptions`.
read_options = grouped("read", ReadOptions, input_options)


def input_files(paths: Iterable[str]) -> list[str]:
    """The files to read: each directory replaced by its input files, in sorted order.

    Warns once about files of those directories left out (PSPLIB result tables).

    Raises
    ------
    InputError
        On a directory that cannot be listed or holds no input file.
    """
    from peakopt.instances.paths import expand

    expanded = expand(paths)
    if expanded.skipped:
        warn(f"skipped {', '.join(expanded.skipped)}: PSPLIB result tables (optima, bounds), not instances")
    return list(expanded.files)


def read_inputs(paths: Iterable[str], fmt: str | None, cpu: str, keep_dummies: bool) -> Suite:
    """Load every input (every input file of a directory) and merge them into one suite."""
    # here, not at the top: the readers import pydantic and the models, which --help does not need
    from peakopt.instances.loader import load
    from peakopt.instances.native import merge_files

    return merge_files(
        (path, load(path, format=fmt, cpu=cpu, keep_dummies=keep_dummies)) for path in input_files(paths)
    )


def summary(*suites: Suite) -> str:
    """``2 workflows (12 tasks), 1 machine`` for a suite (or several: machines counted once)."""
    tasks = sum(len(w.tasks) for suite in suites for w in suite.workflows)
    workflows = sum(len(suite.workflows) for suite in suites)
    machines = len({(m.name, tuple(sorted(m.capacity.items()))) for suite in suites for m in suite.machines})
    return (
        f"{workflows} workflow{'s' * (workflows != 1)} ({tasks} task{'s' * (tasks != 1)}), "
        f"{machines} machine{'s' * (machines != 1)}"
    )


def warn(message: str) -> None:
    """One ``Warning:`` line on stderr."""
    click.echo(f"Warning: {message}", err=True)


def unconstrained(suite: Suite) -> list[str]:
    """Warnings for resources that tasks use but a machine does not limit."""
    used = frozenset().union(*(w.resources for w in suite.workflows))
    return [
        f"machine {m.name!r} does not limit {', '.join(sorted(used - m.capacity.keys()))}; "
        "it is treated as unconstrained"
        for m in suite.machines
        if used - m.capacity.keys()
    ]


def warn_unconstrained(*suites: Suite) -> None:
    """One ``Warning:`` line naming every resource a machine leaves unconstrained, if any."""
    notes = list(dict.fromkeys(note for suite in suites for note in unconstrained(suite)))
    if notes:
        warn("; ".join(notes))


def soft_as_hard_option(func: F) -> F:
    """``--soft-as-hard``, the one option that hardens soft resources (on the commands with verdicts)."""
    return click.option(
        "--soft-as-hard",
        is_flag=True,
        help="Count the machines' soft resources (cpu) as hard: oversubscribing them is unsafe, not slower.",
    )(func)


def harden(suite: Suite, soft_as_hard: bool) -> Suite:
    """``suite`` with every machine's resources hard when ``soft_as_hard`` (unchanged otherwise)."""
    if not soft_as_hard or not any(m.soft for m in suite.machines):
        return suite
    return suite.model_copy(update={"machines": tuple(m.as_hard() for m in suite.machines)})
