"""Plug-in heuristics for the tests: one good, one seeded, and every way to be wrong."""

from __future__ import annotations

from typing import Any

from peakopt.models import Machine, Schedule, Workflow

NOT_CALLABLE = 3


def one_at_a_time(workflow: Workflow, machine: Machine | None) -> dict[str, float]:
    """Tasks back to back in topological order (safe, as a mapping)."""
    starts: dict[str, float] = {}
    now = 0.0
    done: set[str] = set()
    while len(done) < len(workflow.tasks):
        for t in workflow.tasks:
            if t.id not in done and set(t.depends_on) <= done:
                starts[t.id] = now
                now += t.length
                done.add(t.id)
    return starts


def seeded(workflow: Workflow, machine: Machine | None, *, seed: int = 0) -> Schedule:
    """One at a time, shifted by the seed, returned as a Schedule."""
    starts = {tid: start + seed for tid, start in one_at_a_time(workflow, machine).items()}
    return Schedule(workflow=workflow.id, starts=starts, source="ignored")


def raises(workflow: Workflow, machine: Machine | None) -> Any:
    raise ValueError("no idea\nwhat to do")


def garbage(workflow: Workflow, machine: Machine | None) -> Any:
    return [1, 2, 3]


def misses(workflow: Workflow, machine: Machine | None) -> Any:
    return {}


def ghost(workflow: Workflow, machine: Machine | None) -> Any:
    return {**one_at_a_time(workflow, machine), "ghost": 0.0}


def not_a_number(workflow: Workflow, machine: Machine | None) -> Any:
    return dict.fromkeys(one_at_a_time(workflow, machine), "soon")


def infinite(workflow: Workflow, machine: Machine | None) -> Any:
    return dict.fromkeys(one_at_a_time(workflow, machine), float("inf"))


def boolean(workflow: Workflow, machine: Machine | None) -> Any:
    return dict.fromkeys(one_at_a_time(workflow, machine), True)


def other_workflow(workflow: Workflow, machine: Machine | None) -> Any:
    return Schedule(workflow="elsewhere", starts=one_at_a_time(workflow, machine))
