"""The decision step of the destructive lower bound: is there a schedule ending by a target.

On coarse time grids (PSPLIB) set-times branching (earliest start first)
with CP-SAT's clause learning proves such bounds far faster than the
default portfolio, and the mirrored problem (time reversed) is often easier
still: on j3013_5 (makespan <= 66) 28–34 deterministic seconds backwards
against 71–86 forwards; on j3029_3 (<= 77) 14 against about 20. With two
workers both directions race and the first answer wins. On fine grids
(0.01 s) set-times moves one tick at a time, so the full model, with its
ordering literals, goes to the default portfolio instead.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace

from ortools.sat.python import cp_model

from peakopt.solver.conflicts import Structure
from peakopt.solver.cpsat import Model, Options, build
from peakopt.solver.feasibility import end
from peakopt.solver.scaling import Problem, mirror

#: Mean task length (ticks) up to which the time grid counts as coarse.
COARSE_TICKS = 50
DEFINITE = (cp_model.INFEASIBLE, cp_model.FEASIBLE, cp_model.OPTIMAL)
NOTHING = Structure([], [], [])


@dataclass
class Attempt:
    """One search of the decision: a model, its solver, and how to read starts back."""

    model: Model
    solver: cp_model.CpSolver
    back: Callable[[list[int]], list[int]]


def coarse(problem: Problem) -> bool:
    """Whether tasks last few ticks on average (at most :data:`COARSE_TICKS`)."""
    lengths = [d for d in problem.length if d > 0]
    return bool(lengths) and sum(lengths) <= COARSE_TICKS * len(lengths)


def set_times(
    problem: Problem, target: int, lower: int, found: Structure, options: Options, solver: cp_model.CpSolver
) -> Model:
    """A decision model searched earliest start first, on one worker."""
    model = build(problem, horizon=target, lower=lower, found=found, options=options, minimise=False)
    model.model.add_decision_strategy(model.starts, cp_model.CHOOSE_LOWEST_MIN, cp_model.SELECT_MIN_VALUE)
    solver.parameters.search_branching = cp_model.FIXED_SEARCH
    solver.parameters.num_workers = 1
    return model


def attempts(
    problem: Problem,
    target: int,
    lower: int,
    found: Structure,
    options: Options,
    solvers: list[cp_model.CpSolver],
) -> list[Attempt]:
    """The searches to race: backwards (plain model), then forwards (with cliques) if two solvers."""
    if not (options.decision_fixed and coarse(problem)):
        model = build(problem, horizon=target, lower=lower, found=found, options=options, minimise=False)
        return [Attempt(model, solvers[0], list)]
    plain = replace(options, cliques=False, makespan_interval=False, orderings=False)
    mirrored = mirror(problem)

    def backwards(starts: list[int]) -> list[int]:
        span = end(mirrored, starts)
        return [span - s - d for s, d in zip(starts, problem.length, strict=True)]

    found_back = NOTHING if not options.decision_redundant else found
    runs = [Attempt(set_times(mirrored, target, lower, found_back, plain, solvers[0]), solvers[0], backwards)]
    if len(solvers) > 1:
        forwards = replace(plain, cliques=options.cliques)
        runs.append(Attempt(set_times(problem, target, lower, found, forwards, solvers[1]), solvers[1], list))
    return runs


def race(runs: list[Attempt]) -> tuple[cp_model.CpSolverStatus, list[int] | None]:
    """Run the attempts side by side; the first definite answer stops the others."""
    if len(runs) == 1:
        status = runs[0].solver.solve(runs[0].model.model)
        return status, _starts(runs[0], status)
    with ThreadPoolExecutor(len(runs)) as pool:
        futures = {pool.submit(run.solver.solve, run.model.model): run for run in runs}
        for future in as_completed(futures):
            status = future.result()
            if status in DEFINITE:
                for run in runs:
                    run.solver.stop_search()
                return status, _starts(futures[future], status)
    return cp_model.UNKNOWN, None


def _starts(run: Attempt, status: cp_model.CpSolverStatus) -> list[int] | None:
    if status not in (cp_model.FEASIBLE, cp_model.OPTIMAL):
        return None
    return run.back([int(run.solver.value(s)) for s in run.model.starts])
