"""Schedules in ticks: converting a real schedule, checking it against the scaled problem."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from peakopt.models import Schedule
from peakopt.solver.scaling import Problem


def end(problem: Problem, starts: Sequence[int]) -> int:
    """Makespan of integer starts (ticks)."""
    return max((s + d for s, d in zip(starts, problem.length, strict=True)), default=0)


def feasible(problem: Problem, starts: Sequence[int]) -> bool:
    """Whether integer starts respect every precedence and capacity of the scaled problem.

    This is the check a hint passes before CP-SAT sees it; the returned
    schedules are judged again, independently, by the oracle in real time.
    """
    if len(starts) != problem.size or any(s < 0 for s in starts):
        return False
    for j, preds in enumerate(problem.preds):
        if any(starts[j] < starts[i] + problem.length[i] for i in preds):
            return False
    for m, cap in enumerate(problem.capacity):
        changes: dict[int, int] = {}
        for i, pieces in enumerate(problem.pieces):
            for p in pieces:
                if p.demand[m]:
                    begin = starts[i] + p.offset
                    changes[begin] = changes.get(begin, 0) + p.demand[m]
                    changes[begin + p.size] = changes.get(begin + p.size, 0) - p.demand[m]
        load = 0
        for time in sorted(changes):
            load += changes[time]
            if load > cap:
                return False
    return True


def to_ticks(problem: Problem, schedule: Schedule) -> list[int] | None:
    """The schedule's starts rounded to ticks, if they form a feasible schedule of the problem."""
    try:
        starts = [round(Fraction(schedule.starts[task_id]) / problem.tick) for task_id in problem.ids]
    except KeyError:
        return None
    return starts if feasible(problem, starts) else None


def serial(problem: Problem, order: Sequence[int]) -> list[int]:
    """Tasks one after another in ``order`` (a topological order): always feasible."""
    starts = [0] * problem.size
    clock = 0
    for i in order:
        starts[i] = clock
        clock += problem.length[i]
    return starts


def to_seconds(problem: Problem, starts: Sequence[int]) -> dict[str, float]:
    """Integer starts as a task id -> seconds mapping."""
    return {task_id: problem.seconds(s) for task_id, s in zip(problem.ids, starts, strict=True)}
