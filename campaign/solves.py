"""Reference solves: one :class:`SolveItem` per workflow × machine, run by the one runner, kept in a store.

``peakopt solve`` is a thin client of this module: it reads the inputs, opens a
:class:`~peakopt.campaign.references.ReferenceStore` (the ``-o`` file), and hands
the items the store does not hold yet to :func:`peakopt.campaign.runner.run_work` with
:data:`SOLVES`. :func:`run_solve`, the function pickled to the workers, lives here so that
a worker imports nothing of the command line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from peakopt.campaign.executors import solve_deadline
from peakopt.campaign.jsonl import record_line
from peakopt.campaign.pools import send_to_parent
from peakopt.campaign.references import ReferenceStore
from peakopt.campaign.runner import Work
from peakopt.models import Machine, PeakoptError, SolveResult, Workflow
from peakopt.oracle.uncertain.scenarios import Noise


@dataclass(frozen=True)
class SolveItem:
    """One workflow × machine to solve, and its place in the run.

    Attributes
    ----------
    index
        Its number in the run (what its worker's progress messages name).
    workflow, machine
        The instance.
    settings
        Keyword arguments of :func:`peakopt.solver.solve` (``time_limit``, ``backend``...); with
        ``robust`` (a mode), of :func:`peakopt.solver.robust.solve_robust`.
    """

    index: int
    workflow: Workflow
    machine: Machine
    settings: dict[str, Any]


def solve_items(pairs: Iterable[tuple[Workflow, Machine]], settings: dict[str, Any]) -> list[SolveItem]:
    """One item per pair, numbered in order."""
    return [SolveItem(index, workflow, machine, settings) for index, (workflow, machine) in enumerate(pairs)]


def run_solve(item: SolveItem) -> SolveResult:
    """Solve one item in a worker; solver refusals become ``error`` records.

    While the search runs, its incumbent and bound go to the parent as
    ``(item index, incumbent, bound)`` messages (see :func:`peakopt.campaign.pools.send_to_parent`).
    """

    def progress(incumbent: float | None, bound: float) -> None:
        send_to_parent((item.index, incumbent, bound))

    # imported here, in the worker: the module is imported by `peakopt solve --help`, which must not
    # pay for OR-Tools
    from peakopt.solver import solve, solve_robust

    settings = dict(item.settings)
    robust = settings.pop("robust", None)
    if "noise" in settings:  # kept as [duration, demand]: the settings go into records as they are
        settings["noise"] = Noise(*settings["noise"])
    try:
        if robust is not None:
            return solve_robust(item.workflow, item.machine, robust=robust, progress=progress, **settings)
        return solve(item.workflow, item.machine, progress=progress, **settings)
    except PeakoptError as exc:
        return failed(item, str(exc))


def failed(item: SolveItem, message: str) -> SolveResult:
    """The ``error`` record of an item."""
    return SolveResult(
        workflow=item.workflow.id,
        machine=item.machine.name,
        status="error",
        solver=item.settings["backend"],
        params=item.settings,
        message=message,
    )


def deadline(item: SolveItem) -> float:
    """Hard limit of one solve (seconds)."""
    return solve_deadline(float(item.settings["time_limit"]))


#: What the runner runs for ``peakopt solve``: a lost or failed solve is an ``error`` record.
SOLVES: Work[SolveItem, SolveResult] = Work(run_solve, deadline, failed)


class Sink:
    """Where records go as they finish: a reference store, and a printer of JSON lines (stdout).

    Parameters
    ----------
    store
        Keeps each record as it arrives; None when nothing is kept.
    echo
        Prints each record as one JSON line; None when nothing is printed.
    """

    def __init__(self, store: ReferenceStore | None, echo: Callable[[str], None] | None) -> None:
        self.store = store
        self.echo = echo
        self.written = 0

    def write(self, item: SolveItem, result: SolveResult) -> None:
        """Keep the record, then print it."""
        if self.store is not None:
            self.store.add(item.workflow, item.machine, result)
        if self.echo is not None:
            self.echo(record_line(result))
        self.written += 1
