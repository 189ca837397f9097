"""Exact scoring of one schedule by a continuous-time event sweep (no time grid, no float rounding).

Every number is read as its shortest decimal and swept on integer grids
(:mod:`peakopt.oracle.sweep`), so no rounding of the oracle's own enters a
verdict, and each figure is rounded once, to the nearest float, when reported.

Float noise in the given starts is absorbed by :data:`~peakopt.oracle.exact.TOLERANCE`
and by nothing else. A stretch of time shorter than ``TOLERANCE`` times the
schedule's time scale (its largest ``|time|``) lies between two instants that
are the same instant (:func:`~peakopt.oracle.exact.same_time`): it is *noise*,
and the steps running in it count as if they ran one after another — each
one's own overload (which no schedule avoids) counts, their sum does not; it
sets no peak and starts or ends no overflow interval. A dependency holds when
the successor starts at or after the same instant as its predecessor's end.
Loads are exact: a load counts as over capacity only when it exceeds what the
running steps force on their own by more than ``TOLERANCE`` of the capacity.
So a step that starts at 0.7 + 0.1 = 0.7999999999999999 after one ending at
0.8 overlaps nothing, while an overload of any measurable length counts
however long the schedule: ``safe`` means an avoidable cva of exactly 0,
``strict_mru`` needs a cva of exactly 0, and the same data in seconds or in
microseconds get the same verdict.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction

from peakopt.models import Machine, Schedule, Workflow
from peakopt.oracle.exact import close, over, to_float
from peakopt.oracle.score import ResourceScore, Score, Violation
from peakopt.oracle.sweep import Demands, Grid, Placed, demand_grid, pieces, place_segments, time_grid


def _time(x: float) -> str:
    # 12 significant digits, the tolerance's: noise never shows (0.30000000000000004 -> 0.3)
    return repr(float(f"{x:.12g}") + 0.0)


def _amount(x: float) -> str:
    return f"{x:g}"


def _floors(grid: Grid, demands: Demands) -> list[int]:
    """Per task, Σ (amount − C) × duration over its segments over capacity on their own (grid units)."""
    cap = demands.capacity
    return [
        sum(
            (amount - cap) * (end - begin)
            for (begin, end), amount in zip(itertools.pairwise(bounds), amounts, strict=True)
            if over(amount, cap)
        )
        for bounds, amounts in zip(grid.bounds, demands.demand, strict=True)
    ]


def task_floor(workflow: Workflow, resource: str, capacity: float) -> dict[str, float]:
    """Per task over ``capacity`` on its own, the overload it causes alone: ∫ max(0, r(s)/C − 1) ds."""
    grid = time_grid(workflow, {})
    demands = demand_grid(workflow, resource, capacity)
    return {
        task.id: to_float(area, grid.exponent, demands.capacity)
        for task, area in zip(workflow.tasks, _floors(grid, demands), strict=True)
        if area
    }


def cva_floor(workflow: Workflow, machine: Machine) -> float:
    """The capacity violation area no schedule can avoid (serial execution attains it)."""
    grid = time_grid(workflow, {})
    total = Fraction(0)
    for resource, capacity in machine.capacity.items():
        demands = demand_grid(workflow, resource, capacity)
        total += Fraction(sum(_floors(grid, demands)), demands.capacity)
    return to_float(total.numerator, grid.exponent, total.denominator)


def _check_starts(workflow: Workflow, schedule: Schedule, grid: Grid) -> list[Violation]:
    """Missing, unknown and negative starts, and broken dependencies."""
    starts = schedule.starts
    found = []
    for task in workflow.tasks:
        if task.id not in starts:
            found.append(
                Violation(kind="missing", message=f"task {task.id!r} has no start", tasks=(task.id,))
            )
        elif starts[task.id] < 0:
            found.append(
                Violation(
                    kind="negative_start",
                    message=f"task {task.id!r} starts at {_time(starts[task.id])}, before 0",
                    tasks=(task.id,),
                )
            )
    found.extend(
        Violation(kind="unknown", message=f"start given for unknown task {tid!r}", tasks=(tid,))
        for tid in starts
        if tid not in workflow.index
    )
    index = workflow.index
    for pred, succ in workflow.edges:
        if pred in grid.starts and succ in grid.starts:
            end = grid.starts[pred] + grid.bounds[index[pred]][-1]
            if grid.starts[succ] < end and not close(grid.starts[succ], end, grid.scale):
                found.append(
                    Violation(
                        kind="dependency",
                        message=f"{pred} -> {succ}: {succ} starts at {_time(starts[succ])} "
                        f"before {pred} ends at {_time(to_float(end, grid.exponent))}",
                        tasks=(pred, succ),
                    )
                )
    return found


@dataclass
class _Overflow:
    """One overflow interval on the grids, as the sweep grows it."""

    start: int
    end: int
    load: int
    avoidable: int
    tasks: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class _Swept:
    area: int  # ∫ max(0, L − C) dτ (in noise stretches, each step's own overload only)
    avoidable: int  # the part of ``area`` beyond what each step causes on its own
    used: int  # ∫ min(L, C) dτ
    peak: int  # highest load over stretches longer than noise
    overflows: list[_Overflow]


def _sweep(placed: list[Placed], cap: int, scale: int) -> _Swept:
    area = avoidable = used = peak = 0
    done: list[_Overflow] = []
    current: _Overflow | None = None
    for here, after, load, alone, active in pieces(placed, cap):
        width = after - here
        used += min(load, cap) * width
        area += alone * width  # what each running step causes on its own: no schedule avoids it
        if close(here, after, scale):
            # float noise: its steps count as run one after another (their own overload only);
            # an instant neither sets the peak nor starts or ends an overflow interval
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
            current = _Overflow(here, after, load, extra, set(active))
        else:
            current.end, current.load = after, max(current.load, load)
            current.avoidable += extra
            current.tasks.update(active)
    if current is not None:
        done.append(current)
    return _Swept(area, avoidable, used, peak, done)


def _violation(resource: str, capacity: float, found: _Overflow, grid: Grid, demands: Demands) -> Violation:
    start, end = to_float(found.start, grid.exponent), to_float(found.end, grid.exponent)
    load = to_float(found.load, demands.exponent)
    return Violation(
        kind="overflow",
        message=f"{resource} {_amount(load)}/{_amount(capacity)} over [{_time(start)}, {_time(end)})",
        tasks=tuple(sorted(found.tasks)),
        resource=resource,
        start=start,
        end=end,
        load=load,
        capacity=capacity,
        avoidable=found.avoidable > 0,
    )


def evaluate(workflow: Workflow, machine: Machine, schedule: Schedule) -> Score:
    """Score ``schedule`` of ``workflow`` on ``machine`` exactly.

    Parameters
    ----------
    workflow, machine
        The instance; resources the machine does not list are unconstrained
        and do not enter cva or MRU.
    schedule
        Start times; missing, unknown or negative starts and broken
        dependencies make it invalid, and are listed among the violations.

    Returns
    -------
    Score
        Every metric of the design's table, per-resource figures and the
        violations (overflow intervals included). ``mru`` (and the MRUs
        built on it) is None when undefined: a span of 0, or no resource.
    """
    grid = time_grid(workflow, schedule.starts)
    violations = _check_starts(workflow, schedule, grid)

    def seconds(value: Fraction) -> float:
        return to_float(value.numerator, grid.exponent, value.denominator)

    resources, used = {}, []
    cva = avoidable = floor = Fraction(0)
    for resource, capacity in machine.capacity.items():
        demands = demand_grid(workflow, resource, capacity)
        cap = demands.capacity
        swept = _sweep(place_segments(workflow, grid, demands), cap, grid.scale)
        area, own = Fraction(swept.area, cap), Fraction(sum(_floors(grid, demands)), cap)
        resources[resource] = ResourceScore(
            capacity=capacity,
            peak=to_float(swept.peak, demands.exponent),
            peak_ratio=to_float(swept.peak, 0, cap),
            violation_area=seconds(area),
            floor_area=seconds(own),
        )
        violations.extend(_violation(resource, capacity, o, grid, demands) for o in swept.overflows)
        cva, floor = cva + area, floor + own
        avoidable += Fraction(swept.avoidable, cap)
        used.append(Fraction(swept.used, cap))
    index = workflow.index
    makespan = max((s + grid.bounds[index[t]][-1] for t, s in grid.starts.items()), default=0)
    span = makespan - min((0, *grid.starts.values()))
    mru = float(sum(used) / len(used) / span) if used and span > 0 else None
    valid = not any(v.kind != "overflow" for v in violations)
    safe = valid and avoidable == 0
    return Score(
        workflow=workflow.id,
        machine=machine.name,
        source=schedule.source,
        valid=valid,
        makespan=to_float(makespan, grid.exponent),
        cva=seconds(cva),
        cva_floor=seconds(floor),
        avoidable_cva=seconds(avoidable),
        safe=safe,
        mru=mru,
        strict_mru=mru if cva == 0 else 0.0,
        safe_mru=mru if safe else 0.0,
        dependency_violations=sum(v.kind == "dependency" for v in violations),
        resources=resources,
        violations=tuple(violations),
    )
