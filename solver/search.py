"""CP-SAT search: optimise from the heuristic schedule, then destructive lower-bound steps.

The optimisation search finds the optimum of hard RCPSP instances long before
it proves it (PSPLIB j3029_3: the bound stalls at 63–73 against an optimum of
78). Asking the decision question "is there a schedule ending by UB − 1?" on a
model whose horizon is UB − 1 closes such gaps much faster: infeasible proves
UB optimal; feasible gives a better schedule and the question is asked again.
With two or more workers a short optimisation on all of them finds a good
incumbent, then the provers (one worker each, different searches, see
``decide.py``) ask the question side by side, any workers left over keep
optimising, and the first proof stops the others. With one worker the
optimiser and a prover take turns (a deterministic budget first, so that runs
repeat exactly). On mid-sized problems (``CpsatOptions.genetic_from``) the
genetic algorithm takes one of several workers for the whole search, the
searches above the others, all sharing one incumbent; there the first prover
is ``CpsatOptions.genetic_prover``.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from peakopt.solver.backends import Limits, Outcome, Progress, Request
from peakopt.solver.conflicts import ConflictStructure, conflict_structure
from peakopt.solver.cpsat import FROM_BELOW, CpsatOptions, Prover, build
from peakopt.solver.decide import attempt, starts_of, usable
from peakopt.solver.energetic import Windows
from peakopt.solver.feasibility import end, feasible
from peakopt.solver.heuristics.arrays import compile_problem
from peakopt.solver.heuristics.genetic import evolve, start_order
from peakopt.solver.heuristics.rules import latest_finish
from peakopt.solver.lns import search_neighbourhoods
from peakopt.solver.scaling import IntegerProblem, as_instance

#: Phases shorter than this are not started (seconds).
MIN_PHASE = 0.01
#: The first optimisation phase gets at least this long (or half the limit, if shorter): in
#: seconds with several workers, in deterministic seconds with one.
MIN_OPTIMISE = 1.0
MIN_OPTIMISE_ALONE = 5.0


@dataclass
class Shared(Outcome):
    """The outcome the searches of one run share (under ``lock``), and the solvers it can stop."""

    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    solvers: list[cp_model.CpSolver] = field(default_factory=list, repr=False)
    asking: dict[cp_model.CpSolver, int] = field(default_factory=dict, repr=False)
    #: the first exception a search raised: it stops the others and reaches the caller
    failure: BaseException | None = field(default=None, repr=False)

    def done(self, gap_limit: float | None = None) -> bool:
        """Whether the bound meets the makespan (or the gap limit), or a search has failed."""
        return self.failure is not None or super().done(gap_limit)

    def fail(self, error: BaseException) -> None:
        """Record the first failure of a search and stop every running search."""
        with self.lock:
            if self.failure is None:
                self.failure = error
            for solver in self.solvers:
                solver.stop_search()

    def offer(
        self, problem: IntegerProblem, starts: list[int] | None, bound: int | None, note: str | None
    ) -> None:
        """Keep a better schedule or bound; once done, stop every running search.

        A better schedule also stops every decision search that asks about
        a target it makes stale, so that its prover asks again below it.
        """
        with self.lock:
            if starts is not None and end(problem, starts) < self.makespan:
                self.starts, self.makespan = starts, end(problem, starts)
                for solver, target in self.asking.items():
                    if target >= self.makespan:
                        solver.stop_search()
            if bound is not None:
                self.bound = max(self.bound, bound)
            self.bound = min(self.bound, self.makespan)
            if note is not None:
                self.phases.append(note)
            if self.done():
                for solver in self.solvers:
                    solver.stop_search()

    def register(self, solver: cp_model.CpSolver) -> bool:
        """Track a solver so that a proof elsewhere can stop it; False if already done."""
        with self.lock:
            self.solvers.append(solver)
            return not self.done()

    def release(self, solver: cp_model.CpSolver) -> None:
        """Stop tracking a solver that has finished (LNS runs thousands: memory stays bounded)."""
        with self.lock:
            self.solvers.remove(solver)

    def current(self) -> list[int]:
        """A copy of the best schedule so far."""
        with self.lock:
            return list(self.starts)


@dataclass(frozen=True)
class SearchState:
    """One search: the problem, what it may use, its limits, and the outcome its threads share."""

    problem: IntegerProblem
    outcome: Shared
    found: ConflictStructure
    limits: Limits
    options: CpsatOptions
    deadline: float
    progress: Progress | None = None

    def solver(self, seconds: float, workers: int, deterministic: float | None = None) -> cp_model.CpSolver:
        """A CP-SAT solver for ``seconds`` (and ``deterministic`` seconds) on ``workers`` threads."""
        solver = cp_model.CpSolver()
        params = solver.parameters
        params.num_workers = workers
        params.random_seed = self.limits.seed
        params.max_time_in_seconds = max(seconds, MIN_PHASE)
        params.relative_gap_limit = self.limits.gap_limit
        params.cp_model_presolve = self.options.presolve
        # Ctrl-C is the caller's: CP-SAT's own handler crashes a Dask worker that gets one
        params.catch_sigint_signal = False
        if deterministic is not None:
            params.max_deterministic_time = deterministic
        return solver


class _Watcher(cp_model.CpSolverSolutionCallback):
    """Shares each new incumbent at once (the prover's target) and reports progress."""

    def __init__(
        self,
        problem: IntegerProblem,
        outcome: Shared,
        starts: list[cp_model.IntVar],
        progress: Progress | None,
    ):
        super().__init__()
        self.problem, self.outcome, self.starts, self.progress = problem, outcome, starts, progress

    def on_solution_callback(self) -> None:
        self.outcome.offer(self.problem, [int(self.value(s)) for s in self.starts], None, None)
        if self.progress is not None:
            self.progress(round(self.objective_value), math.ceil(self.best_objective_bound - 1e-6))


def optimise(state: SearchState, solver: cp_model.CpSolver) -> None:
    """Minimise the makespan from the current best schedule as hint and horizon."""
    problem, outcome, progress = state.problem, state.outcome, state.progress
    with outcome.lock:
        hint, horizon, lower = list(outcome.starts), outcome.makespan, outcome.bound
    model = build(problem, horizon=horizon, lower=lower, found=state.found, options=state.options)
    for var, value in zip(model.starts, hint, strict=True):
        model.model.add_hint(var, value)
    model.model.add_hint(model.makespan, horizon)
    watcher = _Watcher(problem, outcome, model.starts, progress)
    if progress is not None:
        solver.best_bound_callback = lambda bound: progress(None, math.ceil(bound - 1e-6))
    if not outcome.register(solver):
        return
    status = solver.solve(model.model, watcher)
    if status == cp_model.MODEL_INVALID:  # a bug in the model, never a solver outcome
        raise RuntimeError(f"CP-SAT rejected the model: {model.model.validate()}")
    starts = (
        [int(solver.value(s)) for s in model.starts]
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        else None
    )
    if status == cp_model.OPTIMAL and outcome.gap_limit == 0:
        bound: int | None = end(problem, starts) if starts is not None else None
    elif status in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.UNKNOWN):
        bound = math.ceil(solver.best_objective_bound - 1e-6)
    else:
        bound = None
    outcome.offer(problem, starts, bound, f"optimise:{solver.status_name(status).lower()}")


def target_of(prover: Prover, makespan: int, bound: int) -> int:
    """The question a prover asks: UB − 1 from above; from below the bound itself (a step up on fine grids).

    From below, "a schedule ending by LB?" infeasible raises LB by one; on fine
    grids (0.01 s ticks) one tick is nothing, so the question is a sixteenth of
    the gap higher, which an infeasible answer raises the bound past.
    """
    if prover not in FROM_BELOW:
        return makespan - 1
    return bound + max(0, makespan - 1 - bound) // 16


def destructive(state: SearchState, prover: Prover) -> None:
    """Ask "a schedule ending by the target?" until out of time or done; infeasible raises the bound.

    The provers from above ask UB − 1 (infeasible proves UB), the ones from below
    LB (infeasible raises LB: :func:`target_of`). Energetic reasoning answers
    first when it can (no CP-SAT call).
    """
    problem, outcome = state.problem, state.outcome
    windows = Windows(problem)
    while True:
        seconds = state.deadline - time.monotonic()
        with outcome.lock:
            target, lower = target_of(prover, outcome.makespan, outcome.bound), outcome.bound
        if outcome.done() or seconds < MIN_PHASE:
            return
        if windows.infeasible(target):
            outcome.offer(problem, None, target + 1, f"{prover}:energetic={target}:infeasible")
            continue
        run = attempt(problem, target, lower, state.found, state.options, state.solver(seconds, 1), prover)
        if not outcome.register(run.solver):
            return
        with outcome.lock:
            outcome.asking[run.solver] = target
        status = run.solver.solve(run.model.model)
        with outcome.lock:
            del outcome.asking[run.solver]
            stale = outcome.makespan <= target
        name = "lb" if prover in FROM_BELOW else "ub-1"
        note = f"{prover}:{name}={target}:{run.solver.status_name(status).lower()}"
        if status == cp_model.INFEASIBLE:
            outcome.offer(problem, None, target + 1, note)
        elif status in (cp_model.FEASIBLE, cp_model.OPTIMAL):
            outcome.offer(problem, starts_of(run, status), None, note)
        else:
            outcome.offer(problem, None, None, note)
            if not stale:
                return
        if state.progress is not None:
            state.progress(outcome.makespan, outcome.bound)


def search(
    problem: IntegerProblem,
    *,
    initial: list[int],
    lower: int,
    found: ConflictStructure,
    limits: Limits,
    options: CpsatOptions,
    progress: Progress | None = None,
) -> Shared:
    """Improve ``initial`` (a feasible schedule in ticks) and raise ``lower`` within the limits."""
    span = end(problem, initial)
    outcome = Shared(list(initial), span, min(lower, span), gap_limit=limits.gap_limit)
    state = SearchState(
        problem, outcome, found, limits, options, time.monotonic() + limits.time_limit, progress
    )
    if outcome.done():
        return outcome
    if not options.destructive:
        optimise(state, state.solver(limits.time_limit, limits.workers))
        return outcome
    if limits.workers == 1:
        # a deterministic budget keeps the turn, and so the whole run, reproducible
        optimise(state, state.solver(limits.time_limit, 1, _share(options, limits, MIN_OPTIMISE_ALONE)))
        destructive(state, usable(problem, options.provers)[0])
        return outcome
    # the genetic algorithm takes one worker for the whole search, where it applies
    workers, provers = limits.workers, options.provers
    threads = []
    if options.genetic_from <= problem.size < options.lns_from and not problem.pinned:
        threads.append(_thread(state, genetic))
        workers -= 1
        provers = (options.genetic_prover, *(p for p in provers if p != options.genetic_prover))
    try:
        # a good incumbent first (the heuristic one would send the provers after stale targets)
        optimise(state, state.solver(_share(options, limits, MIN_OPTIMISE), workers))
        if not outcome.done():
            _side_by_side(state, workers, provers)
    except BaseException as error:
        outcome.fail(error)  # stops the thread still searching before the error goes up
    _joined(outcome, threads)
    return outcome


def _thread(state: SearchState, phase: Callable[..., None], *args: object) -> threading.Thread:
    """A started thread running ``phase(state, *args)``; what it raises is recorded, never lost."""

    def run() -> None:
        try:
            phase(state, *args)
        except BaseException as error:  # re-raised by search() once every thread has ended
            error.add_note(f"in the search thread {getattr(phase, '__name__', phase)!r}")
            state.outcome.fail(error)

    thread = threading.Thread(target=run, name=f"peakopt-{getattr(phase, '__name__', 'search')}")
    thread.start()
    return thread


def _joined(outcome: Shared, threads: list[threading.Thread]) -> None:
    """Wait for ``threads``, then raise the first failure of any search."""
    for thread in threads:
        thread.join()
    if outcome.failure is not None:
        raise outcome.failure


def _share(options: CpsatOptions, limits: Limits, least: float) -> float:
    """Length of the first optimisation phase: a share of the limit, at least ``least`` (or half)."""
    return max(options.optimise_share * limits.time_limit, min(least, limits.time_limit / 2))


def neighbourhoods(state: SearchState) -> None:
    """Large-neighbourhood search on one worker from the shared incumbent (:mod:`peakopt.solver.lns`)."""
    problem, outcome = state.problem, state.outcome

    def offer(starts: list[int]) -> None:
        outcome.offer(problem, starts, None, None)
        if state.progress is not None:
            state.progress(outcome.makespan, outcome.bound)

    def solve(
        model: cp_model.CpModel, seconds: float
    ) -> tuple[cp_model.CpSolverStatus, cp_model.CpSolver] | None:
        solver = state.solver(min(seconds, state.deadline - time.monotonic()), 1)
        if not outcome.register(solver):
            return None
        try:
            return solver.solve(model), solver
        finally:
            outcome.release(solver)

    note = search_neighbourhoods(
        problem, outcome.current, offer, outcome.done, state.deadline, solve, state.options, state.limits.seed
    )
    outcome.offer(problem, None, None, note)


def genetic(state: SearchState) -> None:
    """The genetic algorithm (:mod:`~peakopt.solver.heuristics.genetic`) on the ticks, from the incumbent.

    Its schedules are exact on the integer problem (a tick as a second); each
    better one is checked and offered at once, which stops the decision
    searches whose target it makes stale.
    """
    problem, outcome = state.problem, state.outcome
    arrays = compile_problem(*as_instance(problem))
    seeds = [start_order(arrays, outcome.current())]

    def adopt(span: float) -> list[float] | None:
        # a better schedule of the CP-SAT searches joins the population
        return [float(s) for s in outcome.current()] if outcome.makespan < span else None

    def offer(start: list[float], _: float) -> None:
        ticks = [round(s) for s in start]
        if feasible(problem, ticks):
            outcome.offer(problem, ticks, None, None)
            if state.progress is not None:
                state.progress(outcome.makespan, outcome.bound)

    evolve(
        arrays,
        latest_finish(arrays),
        state.deadline,
        random.Random(state.limits.seed),
        offer=offer,
        stop=outcome.done,
        seeds=seeds,
        adopt=adopt,
    )
    outcome.offer(problem, None, None, "genetic")


def _side_by_side(state: SearchState, workers: int, provers: tuple[Prover, ...]) -> None:
    """The provers and LNS, one worker each, and the optimiser on the workers left over, until the deadline.

    LNS (on problems of at least ``options.lns_from`` tasks) takes the place of the last prover.
    """
    usable_provers = usable(state.problem, provers)[:workers]
    jobs: list[tuple[Callable[..., None], *tuple[object, ...]]] = [(destructive, p) for p in usable_provers]
    if state.problem.size >= state.options.lns_from:
        jobs = [*jobs[: workers - 1], (neighbourhoods,)]
    threads = [_thread(state, phase, *args) for phase, *args in jobs]
    left = workers - len(threads)
    try:
        if left > 0:
            optimise(state, state.solver(state.deadline - time.monotonic(), left))
    except BaseException as error:
        state.outcome.fail(error)
    _joined(state.outcome, threads)


def cpsat(request: Request) -> Outcome:
    """The ``cpsat`` backend: the conflict structure of the cliques, then :func:`search`."""
    options = request.options if isinstance(request.options, CpsatOptions) else CpsatOptions()
    return search(
        request.problem,
        initial=request.initial,
        lower=request.lower,
        found=conflict_structure(request.problem, request.cliques),
        limits=request.limits,
        options=options,
        progress=request.progress,
    )
