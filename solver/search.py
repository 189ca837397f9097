"""CP-SAT search in phases: optimise from the heuristic schedule, then a destructive lower-bound step.

The optimisation search finds the optimum of hard RCPSP instances long before
it proves it (PSPLIB j3029_3: the bound stalls at 63–73 against an optimum of
78). Asking the decision question "is there a schedule ending by UB − 1?" on a
model whose horizon is UB − 1 closes such gaps much faster: infeasible proves
UB optimal; feasible gives a better schedule and the question is asked again.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

from ortools.sat.python import cp_model

from peakopt.solver.conflicts import Node
from peakopt.solver.cpsat import Model, Options, Progress, build
from peakopt.solver.feasibility import end
from peakopt.solver.scaling import Problem

#: Phases shorter than this are not started (seconds).
MIN_PHASE = 0.01


@dataclass(frozen=True)
class Limits:
    """How long and how wide to search."""

    time_limit: float
    workers: int
    seed: int
    gap_limit: float = 0.0


@dataclass
class Outcome:
    """Best schedule (ticks) and proven bound after the search."""

    starts: list[int]
    makespan: int
    bound: int
    phases: list[str] = field(default_factory=list)

    def done(self, gap_limit: float) -> bool:
        """Whether the bound meets the makespan, or the gap is within ``gap_limit``."""
        return self.bound >= self.makespan or (self.makespan - self.bound) <= gap_limit * self.makespan


class _Watcher(cp_model.CpSolverSolutionCallback):
    """Reports each new incumbent and the bound to a progress callback."""

    def __init__(self, progress: Progress) -> None:
        super().__init__()
        self.progress = progress

    def on_solution_callback(self) -> None:
        self.progress(round(self.objective_value), math.ceil(self.best_objective_bound - 1e-6))


def _solver(limits: Limits, seconds: float, deterministic: float | None) -> cp_model.CpSolver:
    solver = cp_model.CpSolver()
    params = solver.parameters
    params.num_workers = limits.workers
    params.random_seed = limits.seed
    params.max_time_in_seconds = seconds
    params.relative_gap_limit = limits.gap_limit
    if deterministic is not None:
        # a deterministic budget keeps phase boundaries, and so workers=1 runs, reproducible
        params.max_deterministic_time = deterministic
    return solver


def _run(
    model: Model, solver: cp_model.CpSolver, progress: Progress | None, incumbent: int
) -> tuple[cp_model.CpSolverStatus, list[int] | None]:
    """Solve; the status and the starts of the best schedule found, if any."""
    watcher = None
    if progress is not None:
        watcher = _Watcher(progress)
        solver.best_bound_callback = lambda bound: progress(incumbent, math.ceil(bound - 1e-6))
    status = solver.solve(model.model, watcher)
    if status == cp_model.MODEL_INVALID:  # a bug in the model, never a solver outcome
        raise RuntimeError(f"CP-SAT rejected the model: {model.model.validate()}")
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return status, [int(solver.value(s)) for s in model.starts]
    return status, None


def optimise(
    problem: Problem,
    outcome: Outcome,
    cliques: list[list[Node]],
    limits: Limits,
    seconds: float,
    options: Options,
    progress: Progress | None,
    deterministic: float | None,
) -> cp_model.CpSolverStatus:
    """The optimisation phase, from ``outcome``'s schedule as hint and horizon; updates it."""
    model = build(problem, horizon=outcome.makespan, lower=outcome.bound, cliques=cliques, options=options)
    for var, value in zip(model.starts, outcome.starts, strict=True):
        model.model.add_hint(var, value)
    model.model.add_hint(model.makespan, outcome.makespan)
    solver = _solver(limits, seconds, deterministic)
    status, starts = _run(model, solver, progress, outcome.makespan)
    if starts is not None and end(problem, starts) < outcome.makespan:
        outcome.starts, outcome.makespan = starts, end(problem, starts)
    if status == cp_model.OPTIMAL and limits.gap_limit == 0:
        outcome.bound = outcome.makespan
    elif status in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.UNKNOWN):
        outcome.bound = max(outcome.bound, math.ceil(solver.best_objective_bound - 1e-6))
    outcome.bound = min(outcome.bound, outcome.makespan)
    outcome.phases.append(f"optimise:{solver.status_name(status).lower()}")
    return status


def _decide(
    problem: Problem,
    target: int,
    lower: int,
    cliques: list[list[Node]],
    limits: Limits,
    seconds: float,
    options: Options,
) -> tuple[cp_model.CpSolverStatus, list[int] | None]:
    """Is there a schedule ending by ``target``? The decision model and its search."""
    if not options.decision_redundant:
        options = replace(options, cliques=False, makespan_interval=False)
    model = build(problem, horizon=target, lower=lower, cliques=cliques, options=options, minimise=False)
    solver = _solver(limits, seconds, None)
    if options.decision_fixed:
        # set-times branching with clause learning proves RCPSP bounds far faster than the
        # default portfolio (j3029_3, makespan <= 77: 19-31 s on one worker, unproven in 60 s)
        model.model.add_decision_strategy(model.starts, cp_model.CHOOSE_LOWEST_MIN, cp_model.SELECT_MIN_VALUE)
        solver.parameters.search_branching = cp_model.FIXED_SEARCH
        solver.parameters.num_workers = 1
    return _run(model, solver, None, target + 1)


def destructive(
    problem: Problem,
    outcome: Outcome,
    cliques: list[list[Node]],
    limits: Limits,
    deadline: float,
    options: Options,
    progress: Progress | None,
) -> None:
    """Ask "a schedule ending by UB − 1?" until infeasible (UB proven), out of time, or the gap is met."""
    while not outcome.done(limits.gap_limit):
        seconds = deadline - time.monotonic()
        if seconds < MIN_PHASE:
            return
        target = outcome.makespan - 1
        status, starts = _decide(problem, target, outcome.bound, cliques, limits, seconds, options)
        outcome.phases.append(f"ub-1={target}:{cp_model.CpSolver().status_name(status).lower()}")
        if status == cp_model.INFEASIBLE:
            outcome.bound = outcome.makespan
        elif starts is not None:
            outcome.starts, outcome.makespan = starts, end(problem, starts)
        else:
            return
        if progress is not None:
            progress(outcome.makespan, outcome.bound)


def search(
    problem: Problem,
    *,
    initial: list[int],
    lower: int,
    cliques: list[list[Node]],
    limits: Limits,
    options: Options,
    progress: Progress | None = None,
) -> Outcome:
    """Improve ``initial`` (a feasible schedule in ticks) and raise ``lower`` within the limits."""
    deadline = time.monotonic() + limits.time_limit
    outcome = Outcome(list(initial), end(problem, initial), min(lower, end(problem, initial)))
    if outcome.done(limits.gap_limit):
        return outcome
    if not options.destructive:
        optimise(problem, outcome, cliques, limits, limits.time_limit, options, progress, None)
        return outcome
    share = options.optimise_share * limits.time_limit
    # one worker counts deterministic time (so its runs repeat exactly); several count wall time
    deterministic = share if limits.workers == 1 else None
    wall = limits.time_limit if limits.workers == 1 else share
    optimise(problem, outcome, cliques, limits, wall, options, progress, deterministic)
    destructive(problem, outcome, cliques, limits, deadline, options, progress)
    return outcome
