"""Time-indexed MILP (PuLP with its bundled CBC): an independent cross-check for small instances.

``x[i, t] = 1`` when task ``i`` starts at tick ``t``. Each task starts once,
precedences hold on the start times, and at every tick the pieces running
use at most each capacity. The horizon is the initial schedule's makespan,
so the model is small only when that schedule is short in ticks; larger
instances are refused rather than left to grind.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from peakopt.models import PeakoptError
from peakopt.solver.backends import Limits, Outcome, Request
from peakopt.solver.bounds import windows
from peakopt.solver.feasibility import end, feasible
from peakopt.solver.scaling import IntegerProblem

if TYPE_CHECKING:
    import pulp

#: Largest horizon × tasks the MILP accepts.
MAX_CELLS = 20_000


class MilpTooLarge(PeakoptError):
    """The time-indexed MILP would be too large for this instance."""


def start_ticks(problem: IntegerProblem, horizon: int) -> list[range]:
    """Possible start ticks of each task under ``horizon`` (precedences, release, fixed)."""
    return [range(lo, hi + 1) for lo, hi in windows(problem, horizon)]


def _load_rows(
    problem: IntegerProblem, x: dict[tuple[int, int], pulp.LpVariable], starts: Sequence[range], horizon: int
) -> list[list[list[tuple[int, pulp.LpVariable]]]]:
    """Per resource and tick, the (demand, start variable) pairs that put load there."""
    rows: list[list[list[tuple[int, pulp.LpVariable]]]] = [
        [[] for _ in range(horizon)] for _ in problem.resources
    ]
    for i, pieces in enumerate(problem.pieces):
        for p in pieces:
            for m, amount in enumerate(p.demand):
                if amount == 0:
                    continue
                for t in starts[i]:
                    for tau in range(t + p.offset, min(horizon, t + p.offset + p.size)):
                        rows[m][tau].append((amount, x[i, t]))
    return rows


def build(
    problem: IntegerProblem, horizon: int, lower: int
) -> tuple[pulp.LpProblem, list[pulp.LpAffineExpression]]:
    """The time-indexed model and each task's start as an expression."""
    import pulp  # here: every solve imports this module, and only the milp backend needs PuLP

    starts = start_ticks(problem, horizon)
    lp = pulp.LpProblem("peakopt", pulp.LpMinimize)
    x = {(i, t): lp.add_variable(f"x_{i}_{t}", cat="Binary") for i in range(problem.size) for t in starts[i]}
    makespan = lp.add_variable("makespan", lowBound=lower, upBound=horizon)
    lp += makespan
    start = [pulp.lpSum(t * x[i, t] for t in starts[i]) for i in range(problem.size)]
    for i in range(problem.size):
        lp += pulp.lpSum(x[i, t] for t in starts[i]) == 1
        lp += makespan >= start[i] + problem.length[i]
        for j in problem.preds[i]:
            lp += start[i] >= start[j] + problem.length[j]
    for m, by_tick in enumerate(_load_rows(problem, x, starts, horizon)):
        for terms in by_tick:
            if sum(a for a, _ in terms) > problem.capacity[m]:
                lp += pulp.lpSum(a * v for a, v in terms) <= problem.capacity[m]
    return lp, start


def _cbc(limits: Limits) -> pulp.LpSolver:
    """PuLP's bundled CBC (deprecated for PuLP 4, where CBC becomes a separate install)."""
    import pulp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return pulp.PULP_CBC_CMD(
            msg=False,
            timeLimit=limits.time_limit,
            threads=limits.workers,
            gapRel=limits.gap_limit or None,
            options=[f"randomSeed {limits.seed + 1}"],
        )


def solve_milp(problem: IntegerProblem, *, initial: list[int], lower: int, limits: Limits) -> Outcome:
    """Minimise the makespan with CBC, from ``initial`` (ticks) as the horizon.

    Raises
    ------
    MilpTooLarge
        When horizon × tasks exceeds :data:`MAX_CELLS`.
    """
    horizon = end(problem, initial)
    outcome = Outcome(list(initial), horizon, min(lower, horizon), ["milp"])
    if outcome.done(limits.gap_limit):
        return outcome
    cells = horizon * problem.size
    if cells > MAX_CELLS:
        raise MilpTooLarge(
            f"the time-indexed MILP needs horizon × tasks = {horizon} × {problem.size} = {cells} "
            f"cells, more than {MAX_CELLS}; use the cpsat backend for this instance"
        )
    import pulp

    lp, start = build(problem, horizon, outcome.bound)
    lp.solve(_cbc(limits))
    if lp.sol_status in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        starts = [round(pulp.value(s)) for s in start]
        if feasible(problem, starts) and end(problem, starts) <= outcome.makespan:
            outcome.starts, outcome.makespan = starts, end(problem, starts)
        if lp.sol_status == pulp.LpSolutionOptimal and not limits.gap_limit:
            outcome.bound = outcome.makespan
    outcome.phases.append(f"cbc:{pulp.LpStatus[lp.status].lower()}")
    return outcome


def milp(request: Request) -> Outcome:
    """The ``milp`` backend: :func:`solve_milp` (it has no switches and says no progress)."""
    return solve_milp(request.problem, initial=request.initial, lower=request.lower, limits=request.limits)
