"""The event sweep on integer grids: every time and amount exact, as its shortest decimal.

A schedule's times go on one grid of ``10**E`` seconds, each resource's
demands on a grid of their own (:func:`~peakopt.oracle.base.exact.on_grid`); the
sweep then adds and compares integers only, so 0.1 s + 0.2 s ends exactly at
0.3 s and a load of 0.1 + 0.2 on a capacity of 0.3 is exactly at capacity.
:func:`runs` and :func:`load_profile` give the same pieces in seconds, for pictures.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from peakopt.models import Workflow
from peakopt.oracle.base.exact import close, digits, on_grid, over, to_float

#: A placed segment on the grids: (start, end, task, amount).
Placed = tuple[int, int, str, int]


@dataclass(frozen=True)
class Run:
    """A segment placed in time: ``task`` uses ``amount`` of a resource over [start, end)."""

    start: float
    end: float
    task: str
    amount: float


@dataclass(frozen=True)
class LoadPiece:
    """The load on one resource is constant over [start, end).

    ``active`` maps each running task to its demand on the resource.
    """

    start: float
    end: float
    load: float
    active: Mapping[str, float]


@dataclass(frozen=True)
class Grid:
    """A schedule on the integer time grid: ``10**exponent`` seconds per unit.

    ``bounds[i]`` are task ``i``'s segment boundaries from its start (0 first,
    its length last); ``starts`` holds the known tasks that have a start;
    ``scale`` is the largest ``|time|`` they reach, the schedule's time scale
    that the tolerance is relative to.
    """

    exponent: int
    bounds: tuple[tuple[int, ...], ...]
    starts: dict[str, int]
    scale: int


#: The smallest normal float's shortest decimal, ``(m, e)``.
_NORMAL_MIN = digits(sys.float_info.min)


def time_grid(workflow: Workflow, starts: Mapping[str, float]) -> Grid:
    """The durations and the known tasks' ``starts`` on one exact integer time grid."""
    durations = [s.duration for t in workflow.tasks for s in t.segments]
    given = [t.id for t in workflow.tasks if t.id in starts]
    exponent, ints = on_grid([*durations, *(starts[t] for t in given)])
    rest = iter(ints)
    bounds = tuple(
        tuple(itertools.accumulate((next(rest) for _ in t.segments), initial=0)) for t in workflow.tasks
    )
    placed = dict(zip(given, rest, strict=True))
    index = workflow.index
    scale = max((max(abs(s), abs(s + bounds[index[t]][-1])) for t, s in placed.items()), default=0)
    return Grid(exponent, bounds, placed, max(scale, _least_scale(exponent)) if scale else 0)


def _least_scale(exponent: int) -> int:
    """The smallest normal float on the grid of ``10**exponent`` (rounded up): the least time scale.

    As :func:`~peakopt.oracle.base.exact.same_time` measures subnormal times (whose decimals carry
    fewer digits than the tolerance assumes) against the smallest normal float, so does the judge.
    """
    m, e = _NORMAL_MIN
    if e >= exponent:
        return m * int(10 ** (e - exponent))
    return -(-m // int(10 ** (exponent - e)))


@dataclass(frozen=True)
class Demands:
    """One resource on its integer grid: capacity, and per task and segment, the demand."""

    exponent: int
    capacity: int
    demand: tuple[tuple[int, ...], ...]


def demand_grid(workflow: Workflow, resource: str, capacity: float) -> Demands:
    """``capacity`` and every segment's demand on ``resource`` on one exact integer grid."""
    amounts = [s.demand.get(resource, 0.0) for t in workflow.tasks for s in t.segments]
    exponent, ints = on_grid([capacity, *amounts])
    rest = iter(ints[1:])
    return Demands(exponent, ints[0], tuple(tuple(next(rest) for _ in t.segments) for t in workflow.tasks))


def place_segments(workflow: Workflow, grid: Grid, demands: Demands) -> list[Placed]:
    """(start, end, task, amount) of every placed segment that uses the resource, on the grids."""
    found = []
    for task, bounds, amounts in zip(workflow.tasks, grid.bounds, demands.demand, strict=True):
        start = grid.starts.get(task.id)
        if start is None:
            continue
        for (begin, end), amount in zip(itertools.pairwise(bounds), amounts, strict=True):
            if amount > 0 and end > begin:
                found.append((start + begin, start + end, task.id, amount))
    return found


def pieces(
    placed: list[Placed], capacity: int | None = None
) -> Iterator[tuple[int, int, int, int, dict[str, int]]]:
    """(start, end, load, alone, active) per constant piece, from the first run to the last.

    ``alone`` sums ``amount − capacity`` over the running segments that are
    over ``capacity`` on their own (0 without a capacity); ``active`` (live:
    copy it to keep it) maps each running task to its demand. Pieces of zero
    load between runs are included.
    """
    events: dict[int, list[tuple[int, str, int, int]]] = {}
    for begin, end, task, amount in placed:
        own = amount - capacity if capacity is not None and over(amount, capacity) else 0
        events.setdefault(begin, []).append((1, task, amount, own))
        events.setdefault(end, []).append((-1, task, amount, own))
    load = alone = 0
    active: dict[str, int] = {}
    count: dict[str, int] = {}
    for here, after in itertools.pairwise(sorted(events)):
        for sign, task, amount, own in events[here]:
            load += sign * amount
            alone += sign * own
            active[task] = active.get(task, 0) + sign * amount
            count[task] = count.get(task, 0) + sign
            if not count[task]:
                del active[task], count[task]
        yield here, after, load, alone, active


@dataclass
class OverflowSpan:
    """One overflow interval on the grids, as the sweep grows it."""

    start: int
    end: int
    load: int
    avoidable: int
    tasks: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Swept:
    """One resource's integrals over a schedule, on the grids (amount units × time units)."""

    area: int  # ∫ max(0, L − C) dτ (in noise stretches, each step's own overload only)
    avoidable: int  # the part of ``area`` beyond what each step causes on its own
    used: int  # ∫ min(L, C) dτ
    peak: int  # highest load over stretches longer than noise
    overflows: list[OverflowSpan]


def sweep(placed: list[Placed], cap: int, scale: int) -> Swept:
    """The integrals of one resource's load against capacity ``cap`` in a schedule of time ``scale``.

    A stretch shorter than the tolerance (:func:`~peakopt.oracle.base.exact.close`) is
    noise: its steps count as run one after another (their own overload only), and
    it neither sets the peak nor starts or ends an overflow interval.
    """
    area = avoidable = used = peak = 0
    done: list[OverflowSpan] = []
    current: OverflowSpan | None = None
    for here, after, load, alone, active in pieces(placed, cap):
        width = after - here
        used += min(load, cap) * width
        area += alone * width  # what each running step causes on its own: no schedule avoids it
        if close(here, after, scale):
            continue
        peak = max(peak, load)
        # beyond what the steps force on their own, a load within the tolerance of C is at C
        extra = (load - cap - alone) * width if over(load - alone, cap) else 0
        if not (extra or alone):
            if current is not None:
                done.append(current)
                current = None
            continue
        area, avoidable = area + extra, avoidable + extra
        if current is None:
            current = OverflowSpan(here, after, load, extra, set(active))
        else:
            current.end, current.load = after, max(current.load, load)
            current.avoidable += extra
            current.tasks.update(active)
    if current is not None:
        done.append(current)
    return Swept(area, avoidable, used, peak, done)


def runs(workflow: Workflow, starts: Mapping[str, float], resource: str) -> list[Run]:
    """Every placed segment that uses ``resource`` (tasks without a start are skipped).

    Times are exact sums of the decimals (a start of 0.1 and a duration of 0.2 end at 0.3).
    """
    grid = time_grid(workflow, starts)
    demands = demand_grid(workflow, resource, 1.0)  # no capacity: any grid of the demands will do
    return [
        Run(to_float(b, grid.exponent), to_float(e, grid.exponent), task, to_float(a, demands.exponent))
        for b, e, task, a in place_segments(workflow, grid, demands)
    ]


def load_profile(runs_: list[Run]) -> list[LoadPiece]:
    """The load as constant pieces in time order, from the first run to the last (exact sums).

    Pieces of zero load between runs are included.
    """
    exponent, times = on_grid([x for run in runs_ for x in (run.start, run.end)])
    unit, amounts = on_grid([run.amount for run in runs_])
    given = [(times[2 * k], times[2 * k + 1], run.task, amounts[k]) for k, run in enumerate(runs_)]
    return [
        LoadPiece(
            to_float(here, exponent),
            to_float(after, exponent),
            to_float(load, unit),
            {task: to_float(a, unit) for task, a in active.items()},
        )
        for here, after, load, _, active in pieces(given)
    ]
