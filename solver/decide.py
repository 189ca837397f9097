"""The decision step of the destructive lower bound: is there a schedule ending by a target.

On coarse time grids (PSPLIB) set-times branching (earliest start first)
with CP-SAT's clause learning proves such bounds far faster than the
default portfolio, and the mirrored problem (time reversed) is often easier
still: on j3013_5 (makespan <= 66) 28–34 deterministic seconds backwards
against 71–86 forwards; on j3029_3 (<= 77) 14 against about 20. On fine grids
(0.01 s) set-times moves one tick at a time, so the full model, with its
ordering literals, goes to the default portfolio instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ortools.sat.python import cp_model

from peakopt.solver.conflicts import Structure
from peakopt.solver.cpsat import Model, Options, build
from peakopt.solver.feasibility import end
from peakopt.solver.scaling import Problem, mirror

NOTHING = Structure([], [], [])


@dataclass
class Attempt:
    """One search of the decision: a model, its solver, and how to read starts back."""

    model: Model
    solver: cp_model.CpSolver
    back: Callable[[list[int]], list[int]]


def set_times(
    problem: Problem, target: int, lower: int, found: Structure, options: Options, solver: cp_model.CpSolver
) -> Model:
    """A decision model searched earliest start first, on one worker."""
    model = build(problem, horizon=target, lower=lower, found=found, options=options, minimise=False)
    model.model.add_decision_strategy(model.starts, cp_model.CHOOSE_LOWEST_MIN, cp_model.SELECT_MIN_VALUE)
    solver.parameters.search_branching = cp_model.FIXED_SEARCH
    solver.parameters.num_workers = 1
    return model


def attempt(
    problem: Problem, target: int, lower: int, found: Structure, options: Options, solver: cp_model.CpSolver
) -> Attempt:
    """The decision search: set-times backwards on coarse grids, else the full model's portfolio."""
    if not (options.decision_fixed and problem.coarse):
        model = build(problem, horizon=target, lower=lower, found=found, options=options, minimise=False)
        return Attempt(model, solver, list)
    mirrored = mirror(problem)
    if options.decision_redundant:
        model = set_times(mirrored, target, lower, NOTHING, replace(options, orderings=False), solver)
    else:
        plain = replace(options, cliques=False, makespan_interval=False, orderings=False)
        model = set_times(mirrored, target, lower, NOTHING, plain, solver)

    def backwards(starts: list[int]) -> list[int]:
        span = end(mirrored, starts)
        return [span - s - d for s, d in zip(starts, problem.length, strict=True)]

    return Attempt(model, solver, backwards)


def starts_of(run: Attempt, status: cp_model.CpSolverStatus) -> list[int] | None:
    """The schedule found by the attempt (in the problem's own time direction), if any."""
    if status not in (cp_model.FEASIBLE, cp_model.OPTIMAL):
        return None
    return run.back([int(run.solver.value(s)) for s in run.model.starts])
