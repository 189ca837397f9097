"""Integer time and demand scaling for the exact solvers (CP-SAT and the MILP are integer-only).

Time is counted in ticks and each constrained resource in its own unit, chosen
so that the data become integers exactly when they allow it (0.01 s when
durations have two decimals; tick 1 for PSPLIB). Otherwise durations and
demands are rounded up and capacities down, so every schedule of the scaled
problem is feasible in real time and units, and the problem is marked
``exact=False``. Demands are clamped to capacity first: an over-capacity step
then runs with nothing else that uses that resource, which is exactly what
reaching the cva floor requires.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from peakopt.models import Machine, Workflow

#: Most decimal digits tried for an exact scaling (microseconds, micro-units).
MAX_DIGITS = 6
#: Relative slack under which a scaled number counts as an integer (float noise).
INTEGRAL_TOLERANCE = 1e-9
#: Largest horizon (sum of durations, in ticks) an exact scaling may produce.
MAX_HORIZON = 10**8
#: Largest scaled capacity an exact scaling may produce (energies stay within int64).
MAX_CAPACITY = 2**31
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
class Problem:
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
    tick, units
        Seconds per tick and, per resource, real amount per scaled unit.
    exact
        False when something had to be rounded (conservatively).
    note
        What was rounded, when not exact.
    """

    ids: tuple[str, ...]
    resources: tuple[str, ...]
    capacity: tuple[int, ...]
    length: tuple[int, ...]
    pieces: tuple[tuple[Piece, ...], ...]
    preds: tuple[tuple[int, ...], ...]
    tick: Fraction
    units: tuple[Fraction, ...]
    exact: bool
    note: str = ""

    @property
    def size(self) -> int:
        """Number of tasks."""
        return len(self.ids)

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
        """Ticks as seconds (the nearest float to the exact product)."""
        return float(ticks * self.tick)


def exact_scale(values: Sequence[float], limit: int) -> tuple[Fraction, list[int]] | None:
    """A unit that makes every value an integer, with at most :data:`MAX_DIGITS` decimals.

    Returns the unit (a power of ten times the values' gcd, so integers stay
    small) and the scaled values, or None when no such unit keeps
    ``sum(scaled) <= limit``.
    """
    for digits in range(MAX_DIGITS + 1):
        factor = 10**digits
        scaled = [v * factor for v in values]
        # float noise may round, but a positive value never becomes zero
        if all(
            abs(x - round(x)) <= INTEGRAL_TOLERANCE * max(1.0, abs(x)) and (x <= 0 or round(x) > 0)
            for x in scaled
        ):
            ints = [round(x) for x in scaled]
            common = math.gcd(*ints) or 1
            ints = [n // common for n in ints]
            if sum(ints) > limit:
                return None
            return Fraction(common, factor), ints
    return None


def rounded_tick(total: float) -> Fraction:
    """A power-of-ten tick that puts about :data:`ROUNDED_STEPS` ticks in ``total`` seconds."""
    if total <= 0:
        return Fraction(1)
    # no finer than 1e-12 s: shorter durations just round up to one tick
    return Fraction(10) ** max(-12, math.ceil(math.log10(total) - math.log10(ROUNDED_STEPS)))


def _clamped(workflow: Workflow, resource: str, capacity: float) -> list[list[float]]:
    return [[min(s.demand.get(resource, 0.0), capacity) for s in t.segments] for t in workflow.tasks]


def _scale_resource(
    workflow: Workflow, resource: str, capacity: float
) -> tuple[int, Fraction, list[list[int]], bool]:
    """Scaled capacity, unit, per-task per-segment demands, and whether exact."""
    demands = _clamped(workflow, resource, capacity)
    flat = [capacity] + [d for row in demands for d in row]
    found = exact_scale(flat, MAX_CAPACITY * (len(flat) + 1))
    if found is not None and found[1][0] <= MAX_CAPACITY:
        unit, ints = found
        rest = iter(ints[1:])
        return ints[0], unit, [[next(rest) for _ in row] for row in demands], True
    # rounding up: a demand of exactly the capacity must stay the (rounded-down) capacity
    cap = ROUNDED_STEPS
    scaled = [
        [cap if d >= capacity else min(cap, math.ceil(d / capacity * cap * (1 - 1e-12))) for d in row]
        for row in demands
    ]
    return cap, Fraction(capacity) / cap, scaled, False


def _boundaries(workflow: Workflow) -> tuple[Fraction, list[list[float]], bool]:
    """The tick and, per task, its segment boundaries in ticks (integers when exact)."""
    durations = [s.duration for t in workflow.tasks for s in t.segments]
    found = exact_scale(durations, MAX_HORIZON)
    if found is not None:
        tick, ints = found
        rest = iter(ints)
        exact = True
        steps = [[float(next(rest)) for _ in t.segments] for t in workflow.tasks]
    else:
        tick = rounded_tick(math.fsum(durations))
        exact = False
        steps = [[s.duration / float(tick) for s in t.segments] for t in workflow.tasks]
    bounds = [[0.0, *_accumulate(row)] for row in steps]
    return tick, bounds, exact


def _accumulate(row: list[float]) -> list[float]:
    out, total = [], 0.0
    for x in row:
        total += x
        out.append(total)
    return out


def _pieces(bounds: list[float], demands: list[tuple[int, ...]]) -> tuple[int, tuple[Piece, ...]]:
    """Pieces on whole ticks covering every segment, each with the highest demand it overlaps.

    With integer boundaries these are the segments themselves; with rounded
    ones a boundary tick carries the maximum of the segments meeting in it,
    so the scaled profile covers the real one wherever the task is placed.
    """
    length = math.ceil(bounds[-1] - INTEGRAL_TOLERANCE * max(1.0, bounds[-1]))
    cuts = {0, length}
    for x in bounds[1:-1]:
        cuts.update((min(math.floor(x), length), min(math.ceil(x), length)))
    points = sorted(cuts)
    pieces: list[Piece] = []
    zero = tuple(0 for _ in demands[0]) if demands else ()
    for p, q in itertools.pairwise(points):
        hits = [
            d
            for k, d in enumerate(demands)
            if bounds[k] < bounds[k + 1] and bounds[k] < q and bounds[k + 1] > p
        ]
        demand = tuple(max(col) for col in zip(*hits, strict=True)) if hits else zero
        if pieces and pieces[-1].demand == demand:
            last = pieces.pop()
            pieces.append(Piece(last.offset, q - last.offset, demand))
        else:
            pieces.append(Piece(p, q - p, demand))
    return length, tuple(pieces)


def scale(workflow: Workflow, machine: Machine) -> Problem:
    """The integer problem of ``workflow`` on ``machine``: clamped, scaled, conservative.

    Parameters
    ----------
    workflow, machine
        The instance; resources the machine does not list are left out
        (unconstrained).

    Returns
    -------
    Problem
        Exact when every duration, demand and capacity scaled to an integer
        with at most six decimals; otherwise rounded so that every schedule
        of the problem is safe in reality.
    """
    tick, bounds, time_exact = _boundaries(workflow)
    resources = tuple(r for r in machine.capacity if r in workflow.resources)
    capacity, units, per_resource, exact_units = [], [], [], []
    for resource in resources:
        cap, unit, demands, exact = _scale_resource(workflow, resource, machine.capacity[resource])
        capacity.append(cap)
        units.append(unit)
        per_resource.append(demands)
        exact_units.append(exact)
    lengths, pieces = [], []
    for i, row in enumerate(bounds):
        segs = [tuple(per_resource[m][i][k] for m in range(len(resources))) for k in range(len(row) - 1)]
        length, task_pieces = _pieces(row, segs)
        lengths.append(length)
        pieces.append(task_pieces)
    index = workflow.index
    notes = [] if time_exact else [f"durations rounded up to ticks of {float(tick):g} s"]
    notes += [f"{r} demands rounded up" for r, ok in zip(resources, exact_units, strict=True) if not ok]
    return Problem(
        ids=tuple(t.id for t in workflow.tasks),
        resources=resources,
        capacity=tuple(capacity),
        length=tuple(lengths),
        pieces=tuple(pieces),
        preds=tuple(tuple(index[p] for p in t.depends_on) for t in workflow.tasks),
        tick=tick,
        units=tuple(units),
        exact=time_exact and all(exact_units),
        note="; ".join(notes),
    )


def mirror(problem: Problem) -> Problem:
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
