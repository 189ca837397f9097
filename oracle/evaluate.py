"""Exact scoring of one schedule by a continuous-time event sweep (no time grid)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

from peakopt.models import Machine, Schedule, Workflow
from peakopt.oracle.score import ResourceScore, Score, Violation

#: Relative slack for comparing times and loads computed in floating point.
TOLERANCE = 1e-9


def _time(x: float) -> str:
    return repr(round(x, 6) + 0.0)


def _amount(x: float) -> str:
    return f"{x:g}"


@dataclass(frozen=True)
class Run:
    """A segment placed in time: ``task`` uses ``amount`` of a resource over [start, end)."""

    start: float
    end: float
    task: str
    amount: float


def runs(workflow: Workflow, starts: Mapping[str, float], resource: str) -> list[Run]:
    """Every placed segment that uses ``resource`` (tasks without a start are skipped)."""
    placed = []
    for task in workflow.tasks:
        if task.id not in starts:
            continue
        offset = starts[task.id]
        for segment in task.segments:
            amount = segment.demand.get(resource, 0.0)
            if amount > 0 and segment.duration > 0:
                placed.append(Run(offset, offset + segment.duration, task.id, amount))
            offset += segment.duration
    return placed


@dataclass(frozen=True)
class Piece:
    """The load on one resource is constant over [start, end).

    ``active`` maps each running task to its demand on the resource.
    """

    start: float
    end: float
    load: float
    active: Mapping[str, float]


def load_profile(runs_: list[Run]) -> list[Piece]:
    """The load as constant pieces in time order, from the first run to the last.

    Pieces of zero load between runs are included.
    """
    events: dict[float, list[tuple[int, Run]]] = {}
    for run in runs_:
        events.setdefault(run.start, []).append((1, run))
        events.setdefault(run.end, []).append((-1, run))
    pieces = []
    load = 0.0
    active: dict[str, float] = {}
    count: dict[str, int] = {}
    times = sorted(events)
    for here, after in itertools.pairwise(times):
        for sign, run in events[here]:
            load += sign * run.amount
            active[run.task] = active.get(run.task, 0.0) + sign * run.amount
            count[run.task] = count.get(run.task, 0) + sign
            if not count[run.task]:
                del active[run.task], count[run.task]
        if not active:
            load = 0.0  # drop floating-point residue when nothing runs
        pieces.append(Piece(here, after, load, dict(active)))
    return pieces


def task_floor(workflow: Workflow, resource: str, capacity: float) -> dict[str, float]:
    """Per task, the overload it causes on its own: ∫ max(0, r(s)/C − 1) ds."""
    floors = {}
    for task in workflow.tasks:
        area = math.fsum(
            s.duration * max(0.0, s.demand.get(resource, 0.0) / capacity - 1.0) for s in task.segments
        )
        if area > 0:
            floors[task.id] = area
    return floors


def cva_floor(workflow: Workflow, machine: Machine) -> float:
    """The capacity violation area no schedule can avoid (serial execution attains it)."""
    return math.fsum(
        area
        for resource, cap in machine.capacity.items()
        for area in task_floor(workflow, resource, cap).values()
    )


def _check_starts(workflow: Workflow, schedule: Schedule) -> list[Violation]:
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
    for pred, succ in workflow.edges:
        if pred in starts and succ in starts:
            end = starts[pred] + workflow.task(pred).length
            if starts[succ] < end - TOLERANCE * max(1.0, abs(end)):
                found.append(
                    Violation(
                        kind="dependency",
                        message=f"{pred} -> {succ}: {succ} starts at {_time(starts[succ])} "
                        f"before {pred} ends at {_time(end)}",
                        tasks=(pred, succ),
                    )
                )
    return found


@dataclass(frozen=True)
class _Resource:
    area: float  # ∫ max(0, u − 1) dτ
    used: float  # ∫ min(1, u) dτ
    peak: float
    overflows: list[Violation]


def _sweep(resource: str, capacity: float, pieces: list[Piece]) -> _Resource:
    areas, used, overflows = [], [], []
    current: list[tuple[Piece, float]] = []  # overflowing pieces, with their avoidable area
    for piece in pieces:
        ratio = piece.load / capacity
        length = piece.end - piece.start
        used.append(min(1.0, ratio) * length)
        if piece.load > capacity * (1 + TOLERANCE):
            excess = (ratio - 1.0) * length
            areas.append(excess)
            # what each task would cause on its own here is unavoidable
            alone = sum(max(0.0, a / capacity - 1.0) for a in piece.active.values()) * length
            current.append((piece, excess - alone))
        elif current:
            overflows.append(_overflow(resource, capacity, current))
            current = []
    if current:
        overflows.append(_overflow(resource, capacity, current))
    peak = max((p.load for p in pieces), default=0.0)
    return _Resource(math.fsum(areas), math.fsum(used), peak, overflows)


def _overflow(resource: str, capacity: float, pieces: list[tuple[Piece, float]]) -> Violation:
    start, end = pieces[0][0].start, pieces[-1][0].end
    load = max(p.load for p, _ in pieces)
    tasks = sorted({t for p, _ in pieces for t in p.active})
    avoidable = math.fsum(a for _, a in pieces) > TOLERANCE * max(1.0, end - start)
    return Violation(
        kind="overflow",
        message=f"{resource} {_amount(load)}/{_amount(capacity)} over [{_time(start)}, {_time(end)})",
        tasks=tuple(tasks),
        resource=resource,
        start=start,
        end=end,
        load=load,
        capacity=capacity,
        avoidable=avoidable,
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
        violations (overflow intervals included).
    """
    violations = _check_starts(workflow, schedule)
    starts = {t: s for t, s in schedule.starts.items() if t in workflow.index}
    ends = [starts[t.id] + t.length for t in workflow.tasks if t.id in starts]
    makespan = max(ends, default=0.0)
    origin = min(0.0, *starts.values()) if starts else 0.0
    resources, used = {}, []
    for resource, capacity in machine.capacity.items():
        swept = _sweep(resource, capacity, load_profile(runs(workflow, starts, resource)))
        floor = math.fsum(task_floor(workflow, resource, capacity).values())
        resources[resource] = ResourceScore(
            capacity=capacity,
            peak=swept.peak,
            peak_ratio=swept.peak / capacity,
            violation_area=swept.area,
            floor_area=floor,
        )
        used.append(swept.used)
        violations.extend(swept.overflows)
    cva = math.fsum(r.violation_area for r in resources.values())
    floor = math.fsum(r.floor_area for r in resources.values())
    avoidable = max(0.0, cva - floor)
    span = makespan - origin
    mru = math.fsum(used) / len(used) / span if used and span > 0 else 0.0
    valid = not any(v.kind != "overflow" for v in violations)
    safe = valid and avoidable <= TOLERANCE * max(1.0, span)
    return Score(
        workflow=workflow.id,
        machine=machine.name,
        source=schedule.source,
        valid=valid,
        makespan=makespan,
        cva=cva,
        cva_floor=floor,
        avoidable_cva=avoidable,
        safe=safe,
        mru=mru,
        strict_mru=mru if cva <= TOLERANCE * max(1.0, span) else 0.0,
        safe_mru=mru if safe else 0.0,
        dependency_violations=sum(v.kind == "dependency" for v in violations),
        resources=resources,
        violations=tuple(violations),
    )
