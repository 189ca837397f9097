"""Options shared by the commands that solve or run work in parallel: where it runs, and a progress bar.

One set of defaults for ``solve``, ``stress`` and ``plot``: each solve gets
:data:`TIME_LIMIT` seconds on :data:`WORKERS` solver thread, and
``solve``/``stress`` run one solve per core at once (``--jobs``). One thread
per solve is CP-SAT's reproducible mode (a ``--seed`` gives the same
references again) and, over many instances, more solves at once beat more
threads per solve; ``--workers N`` gives one hard instance more threads.
``plot`` solves one instance and has no ``--jobs``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from peakopt.campaign.ranges import PROCESSES
from peakopt.cli.options import grouped, seconds_option
from peakopt.models.extras import require

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, ProgressColumn

    from peakopt.campaign.executors import Executor, Where

F = TypeVar("F", bound=Callable[..., Any])


#: Seconds per solve, in every command that solves.
TIME_LIMIT = 60.0

#: Solver threads per solve, in every command that solves.
WORKERS = 1


def solve_options(per: str) -> Callable[[F], F]:
    """``--machine``, ``--time-limit`` and ``--workers``: what to solve on, and how long and wide."""

    def decorate(func: F) -> F:
        func = click.option(
            "--workers", type=PROCESSES, default=WORKERS, show_default=True, help=f"Solver threads {per}."
        )(func)
        func = seconds_option("--time-limit", TIME_LIMIT, f"Seconds {per}.")(func)
        return click.option(
            "--machine",
            "machines",
            multiple=True,
            metavar="NAME|FILE",
            help="Machine profile by name (from the inputs) or a JSON file; repeatable. "
            "Default: each input's own machines.",
        )(func)

    return decorate


def executor_options(func: F) -> F:
    """``-j/--jobs N | --dask-local N | --scheduler tcp://HOST:PORT``: where the work runs."""
    func = click.option(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="Run on the Dask cluster of this scheduler (peakopt installed on its workers).",
    )(func)
    func = click.option(
        "--dask-local",
        type=PROCESSES,
        metavar="N",
        help="Start a Dask LocalCluster of N single-threaded worker processes.",
    )(func)
    return click.option(
        "-j",
        "--jobs",
        type=PROCESSES,
        metavar="N",
        help="Local worker processes [default: the cores, at most one per item].",
    )(func)


def where(jobs: int | None, dask_local: int | None, scheduler: str | None) -> Where:
    """The executor the options name; a usage error when more than one is given."""
    given = [
        name for name, v in (("--jobs", jobs), ("--dask-local", dask_local), ("--scheduler", scheduler)) if v
    ]
    if len(given) > 1:
        raise click.UsageError(f"give one of {', '.join(given)}")
    if dask_local or scheduler:
        # the dask extra: one line before any input is read, not a traceback when the pool starts
        require("distributed", given[0])
    from peakopt.campaign.executors import Where  # the executors: pydantic, not for --help

    return Where(jobs=jobs, dask_local=dask_local, scheduler=scheduler)


@dataclass(frozen=True)
class SolveOptions:
    """What to solve on, and how long and wide: the values of :func:`solve_options`."""

    machines: tuple[str, ...]
    time_limit: float
    workers: int


@dataclass(frozen=True)
class ExecutorOptions:
    """Where the work runs: the values of :func:`executor_options`, checked by :meth:`where`."""

    jobs: int | None
    dask_local: int | None
    scheduler: str | None

    def where(self) -> Where:
        """The executor the options name (:func:`where`); a usage error when more than one is given."""
        return where(self.jobs, self.dask_local, self.scheduler)


def solving_options(per: str) -> Callable[[F], F]:
    """:func:`solve_options`, reaching the command as ``solving``, one :class:`SolveOptions`."""
    return grouped("solving", SolveOptions, solve_options(per))


#: :func:`executor_options`, reaching the command as ``executors``, one :class:`ExecutorOptions`.
executors_options = grouped("executors", ExecutorOptions, executor_options)


def start(place: Where, items: int) -> Executor:
    """Start the executor, no more workers than ``items``; an unreachable cluster is one ``Error:`` line.

    Raises
    ------
    ExecutorError
        A :class:`~peakopt.models.PeakoptError`: the cluster cannot be reached or started.
    """
    from peakopt.campaign.executors import open_executor

    return open_executor(place.at_most(items))


def rate_column(unit: str) -> ProgressColumn:
    """A column of items per second (``unit``/s), or a dash before there is a speed."""
    # rich is imported when a bar is shown, not for a command's --help
    from rich.progress import ProgressColumn, Task
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            if speed is None:
                return Text("-")
            # slow items (solves) need their decimals, fast ones (rows) their thousands
            return Text(f"{speed:,.0f} {unit}/s" if speed >= 10 else f"{speed:.2g} {unit}/s")

    return RateColumn()


def progress_bar(console: Console, label: str, unit: str) -> Progress:
    """A bar with count, rate, elapsed time and ETA, on stderr.

    Its texts are literal (``markup=False``): a description names workflows and machines from
    users' files, and the label is kept out of the column's format template (its braces doubled).
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn(label.replace("{", "{{").replace("}", "}}"), style="bold", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        rate_column(unit),
        TimeElapsedColumn(),
        TextColumn("ETA", markup=False),
        TimeRemainingColumn(),
        TextColumn("{task.description}", markup=False),
        console=console,
    )
