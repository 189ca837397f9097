"""Test helpers for the oracle: dependency-valid schedules and a brute-force unit-grid simulator."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

import networkx as nx
from hypothesis import strategies as st

from peakopt.models import Machine, Schedule, Segment, Task, Workflow

#: a (2 s) -> b (3 s) -> c (1 s), no demand.
CHAIN = Workflow(
    id="chain",
    tasks=[
        Task(id="a", duration=2),
        Task(id="b", duration=3, depends_on=["a"]),
        Task(id="c", duration=1, depends_on=["b"]),
    ],
)


def topological(workflow: Workflow) -> list[str]:
    """Task ids in a dependency-respecting order."""
    return list(nx.topological_sort(workflow.graph))


@st.composite
def valid_schedules(draw: st.DrawFn, workflow: Workflow, integer: bool = False) -> Schedule:
    """Dependency-valid starts: each task at its predecessors' end plus a random slack."""
    slack = (
        st.integers(0, 6).map(float)
        if integer
        else st.floats(min_value=0, max_value=6, allow_nan=False, allow_infinity=False)
    )
    starts: dict[str, float] = {}
    for task_id in topological(workflow):
        task = workflow.task(task_id)
        ready = max((starts[p] + workflow.task(p).length for p in task.depends_on), default=0.0)
        starts[task_id] = ready + draw(slack)
    return Schedule(workflow=workflow.id, machine="m", starts=starts)


def serial(workflow: Workflow) -> Schedule:
    """One task after another, in a topological order."""
    starts, clock = {}, 0.0
    for task_id in topological(workflow):
        starts[task_id] = clock
        clock += workflow.task(task_id).length
    return Schedule(workflow=workflow.id, machine="m", starts=starts)


@dataclass
class Grid:
    """Every metric of a schedule, by brute force on a unit time grid (exact fractions)."""

    makespan: Fraction
    cva: Fraction
    cva_floor: Fraction
    mru: Fraction | None
    peak: dict[str, Fraction]
    area: dict[str, Fraction]
    dependency_violations: int


def _task_load(task: Task, start: float, resource: str, slot: int) -> Fraction:
    """The task's demand on ``resource`` during [slot, slot + 1); integer data keep segments aligned."""
    offset = Fraction(start)
    for segment in task.segments:
        end = offset + Fraction(segment.duration)
        if offset <= slot < end:
            return Fraction(segment.demand.get(resource, 0.0))
        offset = end
    return Fraction(0)


def simulate(workflow: Workflow, machine: Machine, schedule: Schedule) -> Grid:
    """Brute-force metrics of a complete schedule with integer starts, durations and demands."""
    starts = dict(schedule.starts)
    makespan = max(Fraction(starts[t.id]) + Fraction(t.length) for t in workflow.tasks)
    area = dict.fromkeys(machine.capacity, Fraction(0))
    peak = dict.fromkeys(machine.capacity, Fraction(0))
    used, floor = Fraction(0), Fraction(0)
    for resource, capacity in machine.capacity.items():
        cap = Fraction(capacity)
        for slot in range(int(makespan)):
            load = sum((_task_load(t, starts[t.id], resource, slot) for t in workflow.tasks), Fraction(0))
            area[resource] += max(Fraction(0), load / cap - 1)
            peak[resource] = max(peak[resource], load)
            used += min(Fraction(1), load / cap) / len(machine.capacity)
        for task in workflow.tasks:  # each task alone, from time 0
            for slot in range(int(task.length)):
                floor += max(Fraction(0), _task_load(task, 0, resource, slot) / cap - 1)
    broken = sum(starts[b] < starts[a] + workflow.task(a).length for a, b in workflow.edges)
    return Grid(
        makespan=makespan,
        cva=sum(area.values(), Fraction(0)),
        cva_floor=floor,
        mru=used / makespan if makespan else None,  # undefined at makespan 0
        peak=peak,
        area=area,
        dependency_violations=broken,
    )


@dataclass
class Exact(Grid):
    """Every metric of a schedule in exact rationals of the shortest decimals, with no tolerance."""

    valid: bool


def decimal(x: float) -> Fraction:
    """The shortest decimal of ``x`` (what its author wrote), exactly."""
    return Fraction(repr(x))


def exact_metrics(workflow: Workflow, machine: Machine, schedule: Schedule) -> Exact:
    """A deliberately plain reference: the load at each piece's midpoint, summed segment by segment.

    For complete schedules whose distinct instants are far apart (no float noise to absorb).
    """
    starts = {t: decimal(s) for t, s in schedule.starts.items()}
    placed, ends = [], {}
    for task in workflow.tasks:
        clock = starts[task.id]
        for segment in task.segments:
            length = decimal(segment.duration)
            placed.append((clock, clock + length, segment))
            clock += length
        ends[task.id] = clock
    times = sorted({x for begin, end, _ in placed for x in (begin, end)})
    area = dict.fromkeys(machine.capacity, Fraction(0))
    peak = dict.fromkeys(machine.capacity, Fraction(0))
    used, floor = Fraction(0), Fraction(0)
    for resource, capacity in machine.capacity.items():
        cap = decimal(capacity)
        for here, after in itertools.pairwise(times):
            middle = (here + after) / 2
            load = sum(
                (decimal(s.demand.get(resource, 0.0)) for b, e, s in placed if b <= middle < e), Fraction(0)
            )
            area[resource] += max(Fraction(0), load / cap - 1) * (after - here)
            peak[resource] = max(peak[resource], load)
            used += min(Fraction(1), load / cap) * (after - here) / len(machine.capacity)
        for begin, end, segment in placed:
            floor += max(Fraction(0), decimal(segment.demand.get(resource, 0.0)) / cap - 1) * (end - begin)
    broken = sum(starts[b] < ends[a] for a, b in workflow.edges)
    makespan = max(ends.values())
    span = makespan - min(Fraction(0), *starts.values())
    return Exact(
        valid=not broken and all(s >= 0 for s in starts.values()),
        makespan=makespan,
        cva=sum(area.values(), Fraction(0)),
        cva_floor=floor,
        mru=used / span if span else None,
        peak=peak,
        area=area,
        dependency_violations=broken,
    )


def shifted(x: float, power: int) -> float:
    """``x · 10**power`` exactly in decimal (the nearest float to it): a change of unit."""
    return float(decimal(x) * Fraction(10) ** power)


def scaled(
    workflow: Workflow, machine: Machine, time: tuple[int, int], demand: int
) -> tuple[Workflow, Machine]:
    """Integer data as decimals: times × mantissa × 10**power, demands and capacities × 10**demand."""
    mantissa, power = time

    def seconds(x: float) -> float:
        return shifted(x * mantissa, power)

    def segment(s: Segment) -> dict[str, object]:
        return {
            "duration": seconds(s.duration),
            "demand": {r: shifted(a, demand) for r, a in s.demand.items()},
        }

    tasks = [
        Task(id=t.id, depends_on=t.depends_on, profile=[segment(s) for s in t.segments])
        for t in workflow.tasks
    ]
    capacity = {r: shifted(c, demand) for r, c in machine.capacity.items()}
    return Workflow(id=workflow.id, tasks=tasks), Machine(name=machine.name, capacity=capacity)
