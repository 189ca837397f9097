"""Schedules in ticks: converting a real schedule, checking it against the scaled problem, and back."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from peakopt.models import Schedule, Workflow
from peakopt.solver.bounds import real_lengths
from peakopt.solver.scaling import IntegerProblem


def end(problem: IntegerProblem, starts: Sequence[int]) -> int:
    """Makespan of integer starts (ticks)."""
    return max((s + d for s, d in zip(starts, problem.length, strict=True)), default=0)


def feasible(problem: IntegerProblem, starts: Sequence[int]) -> bool:
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


def to_ticks(problem: IntegerProblem, schedule: Schedule, tick: Fraction | None = None) -> list[int] | None:
    """The schedule's starts rounded to ticks, if they form a feasible schedule of the problem.

    ``tick`` is the schedule's time unit in ticks' terms: the problem's tick by
    default (starts in seconds), 1 for starts already in ticks.
    """
    unit = problem.tick if tick is None else tick
    try:
        starts = [round(Fraction(schedule.starts[task_id]) / unit) for task_id in problem.ids]
    except KeyError:
        return None
    return starts if feasible(problem, starts) else None


def serial(problem: IntegerProblem, order: Sequence[int]) -> list[int]:
    """Tasks one after another in ``order`` (a topological order): always feasible."""
    starts = [0] * problem.size
    clock = 0
    for i in order:
        starts[i] = clock
        clock += problem.length[i]
    return starts


def to_seconds(problem: IntegerProblem, starts: Sequence[int]) -> dict[str, float]:
    """Integer starts as a task id -> seconds mapping."""
    return {task_id: problem.seconds(s) for task_id, s in zip(problem.ids, starts, strict=True)}


def left_justified(workflow: Workflow, problem: IntegerProblem, starts: Sequence[int]) -> dict[str, float]:
    """A schedule in ticks of a rounded problem, compressed in real time (seconds).

    Each task starts once every task that ends before it starts in ticks has
    ended in real time (its predecessors among them). Real durations are at
    most the rounded ones, so no task starts later than in ticks; and tasks
    that run together in real time overlap pairwise in ticks, hence all at
    one tick (intervals on a line), where their rounded demands fit: safe for
    constant profiles. (With piecewise profiles the segments that meet may
    differ: the caller has the oracle judge the result.)
    """
    lengths = real_lengths(workflow)
    ends = [s + d for s, d in zip(starts, problem.length, strict=True)]
    by_start = sorted(range(problem.size), key=lambda i: (starts[i], problem.length[i]))
    by_end = sorted(range(problem.size), key=lambda i: ends[i])
    real = [Fraction(0)] * problem.size
    latest, done = Fraction(0), 0
    for j in by_start:
        while done < problem.size and ends[by_end[done]] <= starts[j]:
            i = by_end[done]
            latest, done = max(latest, real[i] + lengths[i]), done + 1
        real[j] = latest
    return {task_id: float(t) for task_id, t in zip(problem.ids, real, strict=True)}
