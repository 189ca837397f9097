"""Schedules and solver results."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from peakopt.models.task import FROZEN

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Status = Literal["optimal", "feasible", "infeasible", "unknown", "error"]

#: ``(a, b)``: step ``b`` starts only after step ``a`` ends.
Edge = tuple[Annotated[str, Field(min_length=1)], Annotated[str, Field(min_length=1)]]


class Schedule(BaseModel):
    """Start times of a workflow's tasks on a machine.

    Starts are not checked against the workflow here: a schedule may be wrong
    (an LLM's), and saying how is the oracle's job.

    Parameters
    ----------
    workflow
        Id of the workflow.
    machine
        Name of the machine profile, if any.
    starts
        Task id -> start time in seconds.
    source
        Who produced it: a model name, a heuristic name.
    edges
        Resource-flow edges ``(a, b)``: ``b`` starts only after ``a`` ends, on top of the
        workflow's dependencies. With them a schedule is a partial-order schedule (the
        ``pos`` execution policy runs it; ``solve --robust`` writes them); a plain
        timetable has none.
    meta
        Anything else.
    """

    model_config = FROZEN

    workflow: str
    machine: str | None = None
    starts: dict[str, FiniteFloat]
    source: str | None = None
    edges: tuple[Edge, ...] = ()
    meta: dict[str, Any] = Field(default_factory=dict)


class SolveResult(BaseModel):
    """Outcome of a solve; one line of a references file (JSON Lines).

    Parameters
    ----------
    workflow, machine
        What was solved.
    status
        ``optimal`` (makespan proven), ``feasible`` (a schedule and a bound),
        ``infeasible``, ``unknown`` (no schedule in time) or ``error``.
    makespan
        Makespan of ``starts`` (the upper bound) as the oracle measures it in
        real units, if a schedule was found.
    lower_bound
        Proven lower bound on the optimal makespan, rounded down (a proven
        optimum is reported as the makespan's float).
    starts
        The best schedule found.
    cva_floor
        The capacity violation no schedule can avoid.
    solver
        Backend name, e.g. ``cpsat`` or ``milp``.
    params
        Solver parameters used (time limit, workers, seed...).
    seconds
        Wall time of the solve.
    exact
        Whether the integer scaling was exact (the integer problem is the
        real one, decided on the shortest decimals); if not, durations and
        demands were rounded conservatively, ``message`` says by how much,
        and the figures are still those of the real starts.
    tick
        Seconds per integer time unit in the model.
    message
        Why, when status is ``error`` or ``unknown``; what was rounded, when
        not ``exact``.
    workflow_hash, machine_hash
        :func:`~peakopt.models.nominal_hash` of the workflow (its content without the tasks'
        ``varies``: a reference is solved at nominal figures) and of the machine solved (without
        its ``soft``: the optimum overflows no resource), so
        that a reference is never used for other content under the same id or name (None in
        files written before they existed).
    edges
        The resource-flow edges of a robust reference (see :class:`Schedule`); none otherwise.
    """

    model_config = FROZEN

    workflow: str
    machine: str | None = None
    status: Status
    makespan: FiniteFloat | None = None
    lower_bound: FiniteFloat | None = None
    starts: dict[str, FiniteFloat] | None = None
    cva_floor: FiniteFloat = 0.0
    solver: str = "cpsat"
    params: dict[str, Any] = Field(default_factory=dict)
    seconds: FiniteFloat = 0.0
    exact: bool = True
    tick: FiniteFloat = 1.0
    message: str | None = None
    workflow_hash: str | None = None
    machine_hash: str | None = None
    edges: tuple[Edge, ...] = ()

    @property
    def schedule(self) -> Schedule | None:
        """The best schedule found, as a :class:`Schedule`."""
        if self.starts is None:
            return None
        return Schedule(
            workflow=self.workflow,
            machine=self.machine,
            starts=self.starts,
            source=self.solver,
            edges=self.edges,
        )
