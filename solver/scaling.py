"""Integer time and demand scaling for the exact solvers (CP-SAT and the MILP are integer-only).

Every number is taken as its shortest decimal (:mod:`peakopt.oracle.base.exact`,
the number its author wrote), so exactness is decided in exact arithmetic:
time is counted in ticks and each constrained resource in its own unit, the
smallest power of ten times the values' gcd that makes every value an
integer — 0.01 s for two-decimal durations, 1000000.001 s for a dozen steps
of 1000000.001 s, 1 for PSPLIB. That scaling is exact (``exact=True``: the
integer problem is the real one) when it keeps the horizon within
:data:`MAX_HORIZON` ticks and each capacity times the horizon within
:data:`MAX_ENERGY` (CP-SAT's int64 energies). Otherwise durations and demands
are rounded up and capacities down (time to a power-of-ten tick, demands to
millionths of the capacity), so that every schedule of the integer problem is
safe in real time and units, and the problem says what was rounded, by how
much, in ``note``. Demands are clamped to capacity first: an over-capacity
step then runs with nothing else that uses that resource, which is exactly
what reaching the cva floor requires.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from peakopt.models import Machine, Segment, Task, Workflow
from peakopt.oracle.base.exact import TOLERANCE_DIGITS, fraction, on_grid

#: Largest horizon (sum of durations, in ticks) an exact scaling may produce.
MAX_HORIZON = 10**12
#: Largest capacity × horizon (in units × ticks) an exact scaling may produce: energies stay in int64.
MAX_ENERGY = 2**58
#: Mean task length (ticks) up to which the time grid counts as coarse.
COARSE_TICKS = 50
#: Resolution of conservative rounding: ticks in the serial horizon, units in a capacity.
ROUNDED_STEPS = 10**6


@dataclass(frozen=True)
class Piece:
    """A constant-usage stretch of a task: ``demand`` over [start + offset, start + offset + size)."""

    offset: int
    size: int
    demand: tuple[int, ...]


@dataclass(frozen=True)
class IntegerProblem:
    """A workflow on a machine in integers, built once, read by the solvers (no pydantic).

    Attributes
    ----------
    ids
        Task ids; task ``i`` of the solvers is ``ids[i]``.
    resources, capacity
        The constrained resources (those the machine lists) and their scaled capacities.
    length
        Task run times in ticks.
    pieces
        Per task, its profile as pieces of positive size covering [0, length).
    preds
        Per task, the indices of its predecessors.
    order
        The workflow's topological order (:attr:`peakopt.models.Workflow.topological_order`).
    tick, units
        Seconds per tick and, per resource, real amount per scaled unit.
    exact
        False when something had to be rounded (conservatively).
    time_exact
        Whether the durations, at least, are exact in ticks.
    note
        What was rounded, and by how much, when not exact.
    release
        Per task, the earliest tick it may start (empty: every task from 0).
    fixed
        Per task, the tick it must start at, or None (empty: none fixed); a fixed task's
        release is that tick too (see :mod:`peakopt.solver.pins`).
    """

    ids: tuple[str, ...]
    resources: tuple[str, ...]
    capacity: tuple[int, ...]
    length: tuple[int, ...]
    pieces: tuple[tuple[Piece, ...], ...]
    preds: tuple[tuple[int, ...], ...]
    order: tuple[int, ...]
    tick: Fraction
    units: tuple[Fraction, ...]
    exact: bool
    time_exact: bool = True
    note: str = ""
    release: tuple[int, ...] = ()
    fixed: tuple[int | None, ...] = ()

    @property
    def size(self) -> int:
        """Number of tasks."""
        return len(self.ids)

    @property
    def pinned(self) -> bool:
        """Whether some task has a release time or a fixed start."""
        return bool(self.release)

    @property
    def coarse(self) -> bool:
        """Whether tasks last few ticks on average (at most :data:`COARSE_TICKS`), as in PSPLIB."""
        lengths = [d for d in self.length if d > 0]
        return bool(lengths) and sum(lengths) <= COARSE_TICKS * len(lengths)

    @property
    def serial(self) -> int:
        """Makespan of running the tasks one after another (always feasible)."""
        return sum(self.length)

    def seconds(self, ticks: int) -> float:
        """Ticks as seconds (the nearest float to the exact product; inf past the float range)."""
        try:
            return float(ticks * self.tick)
        except OverflowError:
            return math.inf


def exact_scale(values: Sequence[float], limit: int) -> tuple[Fraction, list[int]] | None:
    """The unit that makes every value's shortest decimal an integer, and the integers.

    The unit is a power of ten times the integers' gcd, so they are as small
    as exactness allows; None when even then ``sum(integers) > limit``.
    """
    exponent, ints = on_grid(values)
    common = math.gcd(*ints) or 1
    ints = [n // common for n in ints]
    if sum(ints) > limit:
        return None
    return common * Fraction(10) ** exponent, ints


def rounded_tick(total: Fraction) -> Fraction:
    """A power-of-ten tick that puts about :data:`ROUNDED_STEPS` ticks in ``total`` seconds."""
    if total <= 0:
        return Fraction(1)
    ratio = total / ROUNDED_STEPS
    # an estimate from the integers' logarithms (any magnitude), then settled exactly
    tick = Fraction(10) ** math.floor(math.log10(ratio.numerator) - math.log10(ratio.denominator))
    while tick < ratio:
        tick *= 10
    while tick / 10 >= ratio:
        tick /= 10
    return tick


@dataclass(frozen=True)
class _Scaled:
    """One resource in integers: capacity, unit, per task and segment the demand, and how."""

    capacity: int
    unit: Fraction
    demands: list[list[int]]
    exact: bool


def _scale_resource(workflow: Workflow, capacity: float, resource: str, horizon: int, up: bool) -> _Scaled:
    """Exact when the clamped demands and the capacity fit :data:`MAX_ENERGY` with the horizon.

    Otherwise in millionths of the capacity, demands rounded up (or, for a
    relaxation, down).
    """
    # the oracle takes a load within TOLERANCE of the capacity above it as at capacity, and only a
    # demand past that as over capacity (clamped); so does the model, which matters only on grids
    # finer than the tolerance (float noise in the demands)
    limit = fraction(capacity) * (1 + Fraction(1, 10**TOLERANCE_DIGITS))
    rows = [
        [d if fraction(d) <= limit else capacity for d in (s.demand.get(resource, 0.0) for s in t.segments)]
        for t in workflow.tasks
    ]
    found = exact_scale([capacity, *(d for row in rows for d in row)], MAX_ENERGY)
    if found is not None and found[1][0] * max(horizon, 1) <= MAX_ENERGY:
        unit, (cap, *rest) = found
        flat = iter(rest)
        room = cap + cap // 10**TOLERANCE_DIGITS
        return _Scaled(room, unit, [[next(flat) for _ in row] for row in rows], True)
    # the capacity itself is exactly ROUNDED_STEPS units: never exceeded when demands round up
    unit = fraction(capacity) / ROUNDED_STEPS
    rounding = math.ceil if up else math.floor
    scaled = [[min(ROUNDED_STEPS, rounding(fraction(d) / unit)) for d in row] for row in rows]
    return _Scaled(ROUNDED_STEPS, unit, scaled, False)


def _boundaries(
    workflow: Workflow, exact: bool, times: Sequence[float]
) -> tuple[Fraction, list[list[Fraction]], bool]:
    """The tick and, per task, its segment boundaries in ticks (integers when the tick is exact).

    The exact tick is tried only when ``exact``, and kept when its horizon
    is at most :data:`MAX_HORIZON`; otherwise a power of ten (:func:`rounded_tick`).
    ``times`` (fixed starts, release times) must fall on the exact tick too.
    """
    durations = [s.duration for t in workflow.tasks for s in t.segments]
    found = exact_scale([*durations, *times], MAX_HORIZON) if exact else None
    if found is not None:
        tick, ints = found
        steps = iter(Fraction(n) for n in ints[: len(durations)])
    else:
        tick = rounded_tick(sum((fraction(d) for d in durations), Fraction(0)))
        steps = iter(fraction(d) / tick for d in durations)
    bounds = [
        list(itertools.accumulate((next(steps) for _ in t.segments), initial=Fraction(0)))
        for t in workflow.tasks
    ]
    return tick, bounds, found is not None


def _grids(
    workflow: Workflow, machine: Machine, resources: tuple[str, ...], up: bool, times: Sequence[float]
) -> tuple[Fraction, list[list[Fraction]], bool, list[_Scaled]]:
    """Tick, boundaries and resources, as exact as the limits allow.

    A fine exact time grid can cost the demands their exactness (capacity ×
    horizon past :data:`MAX_ENERGY`); then a rounded time grid is taken if it
    makes every resource exact: exact demands keep which steps conflict,
    which makes the relaxation's bound much closer than exact durations do.
    """

    def attempt(exact_time: bool) -> tuple[Fraction, list[list[Fraction]], bool, list[_Scaled]]:
        tick, bounds, time_exact = _boundaries(workflow, exact_time, times)
        # a schedule may wait for the latest fixed start or release before running everything
        late = max((math.ceil(fraction(t) / tick) for t in times), default=0)
        horizon = late + sum(math.ceil(row[-1]) for row in bounds)
        return (
            tick,
            bounds,
            time_exact,
            [_scale_resource(workflow, machine.capacity[r], r, horizon, up) for r in resources],
        )

    first = attempt(True)
    if first[2] and not all(s.exact for s in first[3]):
        second = attempt(False)
        if all(s.exact for s in second[3]):
            return second
    return first


def _pieces(
    bounds: list[Fraction], demands: list[tuple[int, ...]], up: bool
) -> tuple[int, tuple[Piece, ...]]:
    """Pieces on whole ticks covering every segment, each with the highest demand it overlaps.

    With integer boundaries these are the segments themselves; with rounded
    ones a boundary tick carries the maximum of the segments meeting in it,
    so the scaled profile covers the real one wherever the task is placed.
    For a relaxation (``up`` False) the task lasts its whole ticks only and a
    boundary tick carries the minimum: a profile below the real one.
    """
    length = math.ceil(bounds[-1]) if up else math.floor(bounds[-1])
    cuts = {0, length}
    for x in bounds[1:-1]:
        cuts.update((min(math.floor(x), length), min(math.ceil(x), length)))
    pick = max if up else min
    pieces: list[Piece] = []
    zero = tuple(0 for _ in demands[0]) if demands else ()
    for p, q in itertools.pairwise(sorted(cuts)):
        hits = [
            d
            for k, d in enumerate(demands)
            if bounds[k] < bounds[k + 1] and bounds[k] < q and bounds[k + 1] > p
        ]
        demand = tuple(pick(col) for col in zip(*hits, strict=True)) if hits else zero
        if pieces and pieces[-1].demand == demand:
            last = pieces.pop()
            pieces.append(Piece(last.offset, q - last.offset, demand))
        else:
            pieces.append(Piece(p, q - p, demand))
    return length, tuple(pieces)


def _note(tick: Fraction, time_exact: bool, rounded: list[tuple[str, Fraction]]) -> str:
    """What was rounded, and the most each number moved."""
    notes = (
        []
        if time_exact
        else [f"durations rounded up to ticks of {float(tick):g} s (each by less than a tick)"]
    )
    notes += [
        f"{r} demands rounded up to units of {float(unit):g} (a millionth of the capacity)"
        for r, unit in rounded
    ]
    return "; ".join(notes)


def scale(
    workflow: Workflow, machine: Machine, *, relaxed: bool = False, times: Sequence[float] = ()
) -> IntegerProblem:
    """The integer problem of ``workflow`` on ``machine``: clamped, scaled, conservative.

    Parameters
    ----------
    workflow, machine
        The instance; resources the machine does not list are left out
        (unconstrained).
    relaxed
        Round the other way where the scaling is not exact: durations and
        demands down, profiles to what lasts whole ticks. Every real schedule
        then maps to a schedule of this problem no longer than it (start
        ``s`` at tick ``floor(s / tick)``), so its lower bounds, in ticks
        times the tick, are lower bounds of the real problem.
    times
        Instants (seconds) the exact time grid must hold as well: the fixed starts and
        release times of a re-plan (:func:`peakopt.solver.pins.pin` sets them on the problem).

    Returns
    -------
    IntegerProblem
        Exact when the shortest decimals of every duration, demand and
        capacity scale to integers within :data:`MAX_HORIZON` and
        :data:`MAX_ENERGY`; otherwise rounded so that every schedule of the
        problem is safe in reality.
    """
    resources = tuple(r for r in machine.capacity if r in workflow.resources)
    tick, bounds, time_exact, scaled = _grids(workflow, machine, resources, not relaxed, times)
    lengths, pieces = [], []
    for i, row in enumerate(bounds):
        segs = [tuple(s.demands[i][k] for s in scaled) for k in range(len(row) - 1)]
        length, task_pieces = _pieces(row, segs, not relaxed)
        lengths.append(length)
        pieces.append(task_pieces)
    return IntegerProblem(
        ids=tuple(t.id for t in workflow.tasks),
        resources=resources,
        capacity=tuple(s.capacity for s in scaled),
        length=tuple(lengths),
        pieces=tuple(pieces),
        preds=workflow.predecessors,
        order=workflow.topological_order,
        tick=tick,
        units=tuple(s.unit for s in scaled),
        exact=time_exact and all(s.exact for s in scaled),
        time_exact=time_exact,
        note=_note(
            tick, time_exact, [(r, s.unit) for r, s in zip(resources, scaled, strict=True) if not s.exact]
        ),
    )


def as_instance(problem: IntegerProblem) -> tuple[Workflow, Machine]:
    """The integer problem as a workflow and a machine: a tick as a second, a unit as an amount.

    For the heuristics, when the real schedule they give does not fit the
    rounded-up problem: on these integers their schedules do, exactly.
    """
    tasks = []
    for task_id, preds, pieces, length in zip(
        problem.ids, problem.preds, problem.pieces, problem.length, strict=True
    ):
        segments = tuple(
            Segment(
                duration=float(p.size),
                demand={r: float(n) for r, n in zip(problem.resources, p.demand, strict=True) if n},
            )
            for p in pieces
        ) or (Segment(duration=float(length)),)
        depends = tuple(problem.ids[i] for i in preds)
        tasks.append(Task(id=task_id, depends_on=depends, profile=segments))
    capacity = dict(zip(problem.resources, map(float, problem.capacity), strict=True))
    return Workflow(id="scaled", tasks=tuple(tasks)), Machine(name="scaled", capacity=capacity)


def mirror(problem: IntegerProblem) -> IntegerProblem:
    """The problem backwards in time: successors become predecessors, profiles run in reverse.

    A schedule ``s'`` of the mirror with makespan ``T`` is the schedule
    ``T − s'_i − length_i`` of the problem, with the same makespan.
    """
    succs: list[list[int]] = [[] for _ in problem.ids]
    for j, preds in enumerate(problem.preds):
        for i in preds:
            succs[i].append(j)
    pieces = tuple(
        tuple(Piece(length - p.offset - p.size, p.size, p.demand) for p in reversed(task))
        for task, length in zip(problem.pieces, problem.length, strict=True)
    )
    return replace(problem, preds=tuple(tuple(s) for s in succs), pieces=pieces)
