"""``solve``: the reference schedule of a workflow on a machine, with a proven lower bound."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Literal

from peakopt.models import Machine, Schedule, SolveResult, Workflow, content_hash
from peakopt.oracle import TOLERANCE, cva_floor, evaluate
from peakopt.solver.bounds import lower_bound, real_lower_bound
from peakopt.solver.conflicts import greedy_cliques, structure, topological_order
from peakopt.solver.cpsat import Options
from peakopt.solver.feasibility import end, serial, to_seconds, to_ticks
from peakopt.solver.heuristics import best_schedule
from peakopt.solver.milp import solve_milp
from peakopt.solver.scaling import Problem, scale
from peakopt.solver.search import Limits, Outcome, search

Backend = Literal["cpsat", "milp"]
BACKENDS: tuple[Backend, ...] = ("cpsat", "milp")

#: progress(incumbent, bound) in seconds; the incumbent is None before the first schedule.
SolveProgress = Callable[[float | None, float], None]


def initial_schedule(workflow: Workflow, machine: Machine, seed: int) -> Schedule:
    """The schedule the exact search starts from (hint and horizon): the heuristic portfolio's best."""
    return best_schedule(workflow, machine, seed=seed, effort="fast")


def _check_arguments(time_limit: float, workers: int, gap_limit: float, backend: str) -> None:
    if not time_limit > 0 or math.isinf(time_limit):
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers!r}")
    if not 0 <= gap_limit < 1:
        raise ValueError(f"gap_limit must be in [0, 1), got {gap_limit!r}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")


def _start(
    problem: Problem, workflow: Workflow, machine: Machine, hint: Schedule | None, seed: int
) -> list[int]:
    """The starting schedule in ticks: the hint or the heuristic, else serial (always feasible)."""
    schedule = hint if hint is not None else initial_schedule(workflow, machine, seed)
    ticks = to_ticks(problem, schedule)
    return ticks if ticks is not None else serial(problem, topological_order(problem))


def solve(
    workflow: Workflow,
    machine: Machine,
    *,
    time_limit: float = 60.0,
    workers: int = 2,
    seed: int = 0,
    backend: Backend = "cpsat",
    hint: Schedule | None = None,
    gap_limit: float = 0.0,
    progress: SolveProgress | None = None,
    options: Options | None = None,
) -> SolveResult:
    """The minimum makespan among safe schedules (avoidable cva 0), proven or bounded.

    Demands are clamped to capacity; resources the machine does not list are
    unconstrained. The search starts from ``hint`` (or the best heuristic
    schedule) and returns at once, as optimal, when that already meets the
    critical-path, energy or clique lower bound.

    Parameters
    ----------
    workflow, machine
        The instance.
    time_limit
        Seconds for the whole search (model building excluded).
    workers
        Solver threads. With ``workers=1`` and a fixed ``seed`` the same input
        gives the same schedule on every run that finishes within the limit.
    seed
        Random seed of the solver and the heuristics.
    backend
        ``cpsat`` (the reference) or ``milp`` (time-indexed, small instances only).
    hint
        A schedule to start from instead of the heuristics; ignored if unsafe.
    gap_limit
        Stop once (makespan − bound) / makespan is at most this.
    progress
        Called with (incumbent, bound) in seconds whenever either improves.
    options
        Model and search switches, for measurements; the defaults are the best measured.

    Returns
    -------
    SolveResult
        ``optimal`` or ``feasible`` (with the best schedule and a proven lower bound).

    Raises
    ------
    ValueError
        On a non-positive time limit or worker count, a gap limit outside [0, 1), an unknown backend.
    peakopt.solver.milp.MilpTooLarge
        When the MILP backend is asked for an instance too large for it.
    """
    _check_arguments(time_limit, workers, gap_limit, backend)
    began = time.perf_counter()
    problem = scale(workflow, machine)
    cliques = greedy_cliques(problem)
    lower = lower_bound(problem, cliques)
    initial = _start(problem, workflow, machine, hint, seed)
    limits = Limits(time_limit, workers, seed, gap_limit)
    ticks = None
    if progress is not None:
        report = progress

        def ticks(incumbent: int | None, bound: int) -> None:
            report(None if incumbent is None else problem.seconds(incumbent), problem.seconds(bound))

    if backend == "milp":
        outcome = solve_milp(problem, initial=initial, lower=lower, limits=limits)
    elif end(problem, initial) <= lower:
        outcome = Outcome(initial, end(problem, initial), lower, ["initial schedule meets the bound"])
    else:
        outcome = search(
            problem,
            initial=initial,
            lower=lower,
            found=structure(problem, cliques),
            limits=limits,
            options=options or Options(),
            progress=ticks,
        )
    params = {
        "time_limit": time_limit,
        "workers": workers,
        "seed": seed,
        "gap_limit": gap_limit,
        "phases": outcome.phases,
    }
    return _result(workflow, machine, problem, outcome, backend, params, time.perf_counter() - began)


def _result(
    workflow: Workflow,
    machine: Machine,
    problem: Problem,
    outcome: Outcome,
    backend: str,
    params: dict[str, object],
    seconds: float,
) -> SolveResult:
    """The outcome in seconds, judged by the oracle before it is returned."""
    starts = to_seconds(problem, outcome.starts)
    score = evaluate(workflow, machine, Schedule(workflow=workflow.id, machine=machine.name, starts=starts))
    makespan = score.makespan
    if problem.exact:
        # the exact decimal value, rather than a sum of float starts and durations
        makespan, bound = problem.seconds(outcome.makespan), problem.seconds(outcome.bound)
    else:
        bound = min(makespan, real_lower_bound(workflow, machine))
    proven = makespan <= bound + TOLERANCE * max(1.0, bound)
    status: Literal["optimal", "feasible", "error"] = "optimal" if proven else "feasible"
    message = problem.note or None
    if not (score.valid and score.safe and abs(score.makespan - makespan) <= TOLERANCE * max(1.0, makespan)):
        status, message = (
            "error",
            "internal error: the oracle rejects the schedule: "
            + "; ".join([*score.reasons, f"avoidable cva {score.avoidable_cva:g}"]),
        )
    return SolveResult(
        workflow=workflow.id,
        machine=machine.name,
        status=status,
        makespan=makespan,
        lower_bound=bound,
        starts=starts,
        cva_floor=cva_floor(workflow, machine),
        solver=backend,
        params=params,
        seconds=seconds,
        exact=problem.exact,
        tick=float(problem.tick),
        message=message,
        workflow_hash=content_hash(workflow),
        machine_hash=content_hash(machine),
    )
