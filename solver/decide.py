"""The decision step of the destructive lower bound: is there a schedule ending by a target.

On coarse time grids (PSPLIB) the question is asked of the plain model
(no redundant cliques or makespan interval) and searched by CP-SAT's own
search without the LP relaxation, which proves these bounds several times
faster than with it (1 worker, the optimum minus one: j3013_5 2.9 s against
17.8 s with the full model and LP, j3013_6 3.9 against 16.9, j3029_6 5.9
against 17.7). Two provers run side by side, the problem forwards and
mirrored (time reversed), since neither wins everywhere (j3013_2 6.6 s
forwards, 8.2 mirrored; j3029_8 3.0 and 3.3; j3029_8 at 80, feasible, 4.5
and 2.3). On fine grids (0.01 s) the full model, with its ordering literals,
is asked forwards only: the mirror numbers a task's pieces in reverse, so
the orderings found for the problem do not apply to it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ortools.sat.python import cp_model

from peakopt.solver.conflicts import ConflictStructure
from peakopt.solver.cpsat import MIRRORED, CpsatOptions, Model, Prover, build
from peakopt.solver.feasibility import end
from peakopt.solver.scaling import IntegerProblem, mirror

NOTHING = ConflictStructure([], [], [])


@dataclass
class Attempt:
    """One search of the decision: a model, its solver, and how to read starts back."""

    model: Model
    solver: cp_model.CpSolver
    back: Callable[[list[int]], list[int]]


def decision_model(
    problem: IntegerProblem,
    target: int,
    lower: int,
    found: ConflictStructure,
    options: CpsatOptions,
    solver: cp_model.CpSolver,
) -> Model:
    """The question "a schedule ending by ``target``?" as a model, and the solver set up for it."""
    if not (problem.coarse and options.decision_plain):
        return build(problem, horizon=target, lower=lower, found=found, options=options, minimise=False)
    plain = replace(options, cliques=False, makespan_interval=False, orderings=False)
    if not options.decision_lp:
        solver.parameters.linearization_level = 0
    return build(problem, horizon=target, lower=lower, found=NOTHING, options=plain, minimise=False)


def attempt(
    problem: IntegerProblem,
    target: int,
    lower: int,
    found: ConflictStructure,
    options: CpsatOptions,
    solver: cp_model.CpSolver,
    prover: Prover,
) -> Attempt:
    """The decision search ``prover`` for "a schedule ending by ``target``"."""
    if prover not in MIRRORED:
        return Attempt(decision_model(problem, target, lower, found, options, solver), solver, list)
    mirrored = mirror(problem)
    model = decision_model(mirrored, target, lower, NOTHING, options, solver)

    def backwards(starts: list[int]) -> list[int]:
        span = end(mirrored, starts)
        return [span - s - d for s, d in zip(starts, problem.length, strict=True)]

    return Attempt(model, solver, backwards)


def usable(problem: IntegerProblem, provers: tuple[Prover, ...]) -> tuple[Prover, ...]:
    """The provers worth running on ``problem``: the mirrored ones only on coarse time grids.

    At least the forward one, so that the destructive step always has a search. Not the
    mirrored ones with pins: a release time mirrored is a deadline, which the mirror lacks.
    """
    mirrored = problem.coarse and not problem.pinned
    return tuple(p for p in provers if mirrored or p not in MIRRORED) or ("forward",)


def starts_of(run: Attempt, status: cp_model.CpSolverStatus) -> list[int] | None:
    """The schedule found by the attempt (in the problem's own time direction), if any."""
    if status not in (cp_model.FEASIBLE, cp_model.OPTIMAL):
        return None
    return run.back([int(run.solver.value(s)) for s in run.model.starts])
