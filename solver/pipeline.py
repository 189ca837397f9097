"""``solve``: the reference schedule of a workflow on a machine, with a proven lower bound."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction

from peakopt.models import Machine, Schedule, SolveResult, Workflow
from peakopt.oracle import broken_pins, same_time
from peakopt.oracle.base.exact import fraction
from peakopt.solver.backends import Limits, Outcome, Progress, Request, backend_named, names, register
from peakopt.solver.bounds import float_below, lower_bound, real_lengths, real_lower_bound
from peakopt.solver.checked import Origin, Verdict, judge, verified
from peakopt.solver.conflicts import Node, greedy_cliques
from peakopt.solver.cpsat import CpsatOptions
from peakopt.solver.energetic import destructive_bound
from peakopt.solver.feasibility import end, feasible, left_justified, serial, to_seconds, to_ticks
from peakopt.solver.heuristics import best_schedule
from peakopt.solver.heuristics.large import QUICK_FROM, quick_schedule
from peakopt.solver.milp import milp
from peakopt.solver.pins import Pins, by_start, check_pins, pin, release_bound
from peakopt.solver.scaling import IntegerProblem, as_instance, scale
from peakopt.solver.search import MIN_PHASE, cpsat

register("cpsat", cpsat)
register("milp", milp, relaxation=False)

#: The built-in backends' names (:func:`peakopt.solver.backends.register` adds others).
BACKENDS = names()

#: progress(incumbent, bound) in seconds; the incumbent is None before the first schedule.
SolveProgress = Callable[[float | None, float], None]


def initial_schedule(workflow: Workflow, machine: Machine, seed: int) -> Schedule:
    """The schedule the exact search starts from (hint and horizon): the heuristic portfolio's best.

    From :data:`QUICK_FROM` tasks on the portfolio's unimproved serial passes, in chunks
    (:func:`~peakopt.solver.heuristics.large.quick_schedule`): within the first second or two.
    """
    if len(workflow.tasks) >= QUICK_FROM:
        return quick_schedule(workflow, machine)
    return best_schedule(workflow, machine, seed=seed, effort="fast")


def peak_memory_mb() -> float | None:
    """The process's peak resident memory so far (MB), None where the platform does not say."""
    try:
        import resource  # Unix only
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)  # bytes on macOS, else KB


def check_solve_arguments(time_limit: float, workers: int, gap_limit: float, backend: str) -> None:
    """Refuse (``ValueError``) what :func:`solve` cannot take: the limits and the backend's name."""
    if not time_limit > 0 or math.isinf(time_limit):
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers!r}")
    if not 0 <= gap_limit < 1:
        raise ValueError(f"gap_limit must be in [0, 1), got {gap_limit!r}")
    backend_named(backend)


def _start(
    problem: IntegerProblem, workflow: Workflow, machine: Machine, hint: Schedule | None, seed: int
) -> list[int]:
    """The starting schedule in ticks: the hint or the heuristic, else serial (always feasible)."""
    if sum(real_lengths(workflow)) > sys.float_info.max:
        # the heuristics add seconds in floats, which cannot hold this workflow's total
        return serial(problem, problem.order)
    schedule = hint if hint is not None else initial_schedule(workflow, machine, seed)
    ticks = to_ticks(problem, schedule)
    if ticks is None and problem.pinned:
        # the heuristics know no pins: their order, placed around the pins
        return serial(problem, by_start(problem, schedule))
    if ticks is None and not problem.exact:
        # real starts seldom fit rounded-up durations; the heuristics on the integers do
        flow, box = as_instance(problem)
        ticks = to_ticks(problem, initial_schedule(flow, box, seed), Fraction(1))
    return ticks if ticks is not None else serial(problem, problem.order)


def solve(
    workflow: Workflow,
    machine: Machine,
    *,
    time_limit: float = 60.0,
    workers: int = 2,
    seed: int = 0,
    backend: str = "cpsat",
    hint: Schedule | None = None,
    gap_limit: float = 0.0,
    progress: SolveProgress | None = None,
    options: CpsatOptions | None = None,
    fixed: Mapping[str, float] | None = None,
    release: Mapping[str, float] | None = None,
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
        Seconds for the whole solve: the start schedule, the bounds and the search all count
        against it (building the models does not).
    workers
        Solver threads. With ``workers=1`` and a fixed ``seed`` the same input
        gives the same schedule on every run that finishes within the limit.
    seed
        Random seed of the solver and the heuristics.
    backend
        The name of a registered backend (see :mod:`peakopt.solver.backends`): ``cpsat``
        (the reference) or ``milp`` (time-indexed, small instances only).
    hint
        A schedule to start from instead of the heuristics; ignored if unsafe.
    gap_limit
        Stop once (makespan − bound) / makespan is at most this.
    progress
        Called with (incumbent, bound) in seconds whenever either improves.
    options
        Model and search switches, for measurements; the defaults are the best measured.
    fixed
        Re-planning: step id -> the start (seconds) it keeps, for the steps already started
        (the workflow gives their actual durations, or at least their time so far). Their
        predecessors must be fixed too, and end by then. The starts must fall on the solver's
        exact time grid (they are part of it unless the grid had to be rounded).
    release
        Re-planning: step id -> the earliest start (seconds) of a step not started yet (rounded
        up to the time grid). The result's params record both; see ``docs/solver.md``.

    Returns
    -------
    SolveResult
        ``optimal`` or ``feasible`` (with the best schedule and a proven lower bound).

    Raises
    ------
    ValueError
        On a non-positive time limit or worker count, a gap limit outside [0, 1), an unknown backend.
    peakopt.solver.pins.PinError
        On fixed starts or release times no schedule keeps (see :func:`~peakopt.solver.pins.check_pins`).
    peakopt.solver.milp.MilpTooLarge
        When the MILP backend is asked for an instance too large for it.
    """
    check_solve_arguments(time_limit, workers, gap_limit, backend)
    pins = check_pins(workflow, fixed, release)
    began = time.perf_counter()
    problem = pin(scale(workflow, machine, times=pins.times), pins, workflow.id)
    cliques = greedy_cliques(problem)
    initial = _start(problem, workflow, machine, hint, seed)
    limits = Limits(time_limit, workers, seed, gap_limit)
    ticks = None
    if progress is not None:
        report = progress
        # a rounded problem's bounds are not bounds of the real one: show the real data's
        real = None if problem.exact else float_below(real_lower_bound(workflow, machine))

        def ticks(incumbent: int | None, bound: int) -> None:
            shown = problem.seconds(bound) if real is None else real
            report(None if incumbent is None else problem.seconds(incumbent), shown)

    deadline = began + time_limit  # the start schedule and the bounds count against the limit too
    outcome = _search(problem, initial, cliques, limits, backend, options or CpsatOptions(), deadline, ticks)
    relaxed = None
    if not problem.exact:
        relaxed = _relaxation(
            workflow, machine, outcome, limits, backend, options or CpsatOptions(), deadline
        )
    params = {
        "time_limit": time_limit,
        "workers": workers,
        "seed": seed,
        "gap_limit": gap_limit,
        "phases": outcome.phases,
        **pins.params(),
        "peak_memory_mb": peak_memory_mb(),
    }
    seconds = time.perf_counter() - began
    return _result(workflow, machine, problem, outcome, relaxed, backend, params, seconds, pins)


def _search(
    problem: IntegerProblem,
    initial: list[int],
    cliques: list[list[Node]],
    limits: Limits,
    backend: str,
    options: CpsatOptions,
    deadline: float,
    progress: Progress | None = None,
) -> Outcome:
    """The best schedule in ticks and a proven bound, from ``initial`` (at once if it meets the bound).

    The destructive bound and the search share the time left until ``deadline``
    (``time.perf_counter()``).
    """
    left = max(0.0, deadline - time.perf_counter())
    lower = destructive_bound(problem, lower_bound(problem, cliques), end(problem, initial), left)
    if end(problem, initial) <= lower:
        return Outcome(initial, end(problem, initial), lower, ["initial schedule meets the bound"])
    limits = replace(limits, time_limit=max(0.0, deadline - time.perf_counter()))
    request = Request(problem, initial, lower, cliques, limits, options, progress)
    return backend_named(backend).search(request)


@dataclass(frozen=True)
class _Relaxation:
    """What the relaxation of rounded data gives: a real lower bound, and its best schedule in ticks."""

    bound: Fraction
    problem: IntegerProblem
    starts: list[int]


def _relaxation(
    workflow: Workflow,
    machine: Machine,
    outcome: Outcome,
    limits: Limits,
    backend: str,
    options: CpsatOptions,
    deadline: float,
) -> _Relaxation:
    """A lower bound in seconds on the optimum of rounded data, exactly, and the relaxation's schedule.

    The best of the real data's critical path and energy and of the proven
    bound of the relaxation (:func:`~peakopt.solver.scaling.scale` with
    ``relaxed``), searched from the rounded problem's schedule (which it
    admits: its lengths and demands are no larger) for the time left. Its
    schedule, compressed in real time, may be safe too (the oracle decides):
    rounding demands up can forbid a pair that the oracle lets share a capacity.
    """
    relaxed = scale(workflow, machine, relaxed=True)
    cliques = greedy_cliques(relaxed)
    best = max(real_lower_bound(workflow, machine), lower_bound(relaxed, cliques) * relaxed.tick)
    initial = outcome.starts if feasible(relaxed, outcome.starts) else serial(relaxed, relaxed.order)
    if deadline - time.perf_counter() < MIN_PHASE or not backend_named(backend).relaxation:
        return _Relaxation(best, relaxed, initial)
    found = _search(relaxed, initial, cliques, limits, backend, options, deadline)
    return _Relaxation(max(best, found.bound * relaxed.tick), relaxed, found.starts)


def _real(
    workflow: Workflow,
    machine: Machine,
    problem: IntegerProblem,
    ticks: list[int],
    relaxed: _Relaxation | None,
    pins: Pins,
) -> tuple[dict[str, float], Verdict]:
    """The schedule in seconds and the oracle's score of it, in real time and units.

    On rounded data the schedule compressed in real time
    (:func:`~peakopt.solver.feasibility.left_justified`), and so compressed the
    relaxation's, replace it when the oracle finds them safe, shorter and keeping the pins.
    """
    schedules = [to_seconds(problem, ticks)]
    if not problem.time_exact:
        schedules.append(left_justified(workflow, problem, ticks))
    if relaxed is not None:
        schedules.append(left_justified(workflow, relaxed.problem, relaxed.starts))
    best = None
    for starts in schedules:
        score = judge(workflow, machine, starts)
        schedule = Schedule(workflow=workflow.id, machine=machine.name, starts=starts)
        kept = not broken_pins(schedule, pins.fixed, pins.release)
        if best is None or (score.valid and score.safe and kept and score.makespan < best[1].makespan):
            best = (starts, score)
    assert best is not None
    return best


def _result(
    workflow: Workflow,
    machine: Machine,
    problem: IntegerProblem,
    outcome: Outcome,
    relaxed: _Relaxation | None,
    backend: str,
    params: dict[str, object],
    seconds: float,
    pins: Pins,
) -> SolveResult:
    """The outcome as the oracle judges its real starts: the figures are those, in real units.

    On exactly scaled data the integer problem is the real one, so its bound
    and its proof hold; on rounded data the bound comes from the real data,
    and the result is optimal only when the real makespan meets it.
    """
    origin = Origin(backend, params, seconds, problem.exact, float(problem.tick))
    if not math.isfinite(problem.seconds(outcome.makespan)):
        message = "the best schedule found ends past the largest float (1.8e308 s): no start is writable"
        return origin.result(workflow, machine, "error", message)
    starts, score = _real(workflow, machine, problem, outcome.starts, relaxed, pins)
    makespan = score.makespan
    if problem.exact:
        lower = outcome.bound * problem.tick
        proven = outcome.makespan <= outcome.bound
        agrees = same_time(makespan, problem.seconds(outcome.makespan))
    else:
        lower = relaxed.bound if relaxed is not None else real_lower_bound(workflow, machine)
        if pins:
            lower = max(lower, release_bound(problem, real_lengths(workflow), pins))
        ends = (fraction(starts[t]) + d for t, d in zip(problem.ids, real_lengths(workflow), strict=True))
        proven = max(ends, default=Fraction(0)) <= lower
        agrees = makespan <= problem.seconds(outcome.makespan)  # rounding up only lengthens
    note = problem.note or None
    if note and not proven:
        note += "; the real optimum lies between lower_bound and makespan"
    return verified(
        workflow,
        machine,
        starts,
        score,
        proven=proven,
        lower=lower,
        agrees=agrees,
        pins=pins,
        origin=origin,
        message=note,
    )
