"""Helpers for the heuristics tests: independent checks computed from the models."""

from __future__ import annotations

import networkx as nx

from peakopt.models import Machine, Schedule, Segment, Task, Workflow
from peakopt.oracle import Score, evaluate

#: Every parametrised built-in, with small parameters so the tests stay fast.
PARAMETRISED = ("cap:1", "cap:3", "sampling:5", "sampling:4:grpw", "fbi:sampling:5")

#: Methods that ignore the machine.
BLIND = ("asap", "serial", "cap:1", "cap:3")


def task(tid: str, duration: float, deps: tuple[str, ...] = (), **demand: float) -> Task:
    """A constant task, e.g. ``task("a", 2, memory_mb=6)``."""
    return Task(id=tid, duration=duration, demand=demand, depends_on=deps)


def phases(tid: str, *parts: tuple[float, float]) -> Task:
    """A piecewise task of (duration, memory_mb) phases."""
    return Task(id=tid, profile=tuple(Segment(duration=d, demand={"memory_mb": m}) for d, m in parts))


def judged(workflow: Workflow, machine: Machine, schedule: Schedule) -> Score:
    """The oracle's score, asserting the schedule is dependency-valid and covers every task."""
    score = evaluate(workflow, machine, schedule)
    assert score.valid, (schedule.source, score.reasons)
    assert set(schedule.starts) == {t.id for t in workflow.tasks}
    return score


def most_in_flight(workflow: Workflow, starts: dict[str, float]) -> int:
    """The largest number of tasks of positive length running at one instant."""
    events = []
    for t in workflow.tasks:
        if t.length > 0:
            events += [(starts[t.id], 1), (starts[t.id] + t.length, -1)]
    running = peak = 0
    for _, step in sorted(events):  # an end (-1) sorts before a start at the same time
        running += step
        peak = max(peak, running)
    return peak


def critical_path(workflow: Workflow) -> float:
    """Longest path by task length, computed on the model's networkx graph."""
    finish: dict[str, float] = {}
    for tid in nx.topological_sort(workflow.graph):
        t = workflow.task(tid)
        finish[tid] = max((finish[p] for p in t.depends_on), default=0.0) + t.length
    return max(finish.values())
