"""Options shared by the commands that run work in parallel: where it runs, and a progress bar."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from peakopt.campaign.executors import Executor, ExecutorError, Where, open_executor
from peakopt.cli.options import PROCESSES, seconds_option
from peakopt.models import PeakoptError

F = TypeVar("F", bound=Callable[..., Any])


def solve_options(time_limit: float, workers: int, per: str) -> Callable[[F], F]:
    """``--machine``, ``--time-limit`` and ``--workers``: what to solve on, and how long and wide."""

    def decorate(func: F) -> F:
        func = click.option(
            "--workers", type=PROCESSES, default=workers, show_default=True, help=f"Solver threads {per}."
        )(func)
        func = seconds_option("--time-limit", time_limit, f"Seconds {per}.")(func)
        return click.option(
            "--machine",
            "machines",
            multiple=True,
            metavar="NAME|FILE",
            help="Machine profile by name (from the inputs) or a JSON file; repeatable. "
            "Default: each input's own machines.",
        )(func)

    return decorate


def executor_options(jobs_default: str) -> Callable[[F], F]:
    """``--jobs N | --dask-local N | --scheduler tcp://HOST:PORT``; ``jobs_default`` for the help."""
    return lambda func: _executor_options(func, jobs_default)


def _executor_options(func: F, jobs_default: str) -> F:
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
        "--jobs",
        type=PROCESSES,
        metavar="N",
        help=f"Local worker processes [default: {jobs_default}].",
    )(func)


def where(jobs: int | None, dask_local: int | None, scheduler: str | None) -> Where:
    """The executor the options name; a usage error when more than one is given."""
    given = [
        name for name, v in (("--jobs", jobs), ("--dask-local", dask_local), ("--scheduler", scheduler)) if v
    ]
    if len(given) > 1:
        raise click.UsageError(f"give one of {', '.join(given)}")
    return Where(jobs=jobs, dask_local=dask_local, scheduler=scheduler)


def start(place: Where, items: int) -> Executor:
    """Start the executor, no more workers than ``items``; an unreachable cluster is one ``Error:`` line."""
    try:
        return open_executor(place.at_most(items))
    except ExecutorError as exc:
        raise PeakoptError(str(exc)) from None


class RateColumn(ProgressColumn):
    """Items per second."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        """The task's speed, or a dash before there is one."""
        speed = task.finished_speed or task.speed
        return Text("-" if speed is None else f"{speed:,.0f} {self.unit}/s")


def progress_bar(console: Console, label: str, unit: str) -> Progress:
    """A bar with count, rate, elapsed time and ETA, on stderr."""
    return Progress(
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(unit),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TextColumn("{task.description}"),
        console=console,
    )
