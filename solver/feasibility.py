"""Schedules in ticks: converting a real schedule, checking it against the scaled problem, and back."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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
    if problem.pinned and not keeps_pins(problem, starts):
        return False
    for j, preds in enumerate(problem.preds):
        if any(starts[j] < starts[i] + problem.length[i] for i in preds):
            return False
    return overflow(problem, starts, range(problem.size)) is None


def keeps_pins(problem: IntegerProblem, starts: Sequence[int]) -> bool:
    """Whether integer starts keep the problem's fixed starts and release times."""
    fixed = problem.fixed or (None,) * problem.size
    return all(
        s >= r and (at is None or s == at) for s, r, at in zip(starts, problem.release, fixed, strict=True)
    )


def overflow(problem: IntegerProblem, starts: Sequence[int], tasks: Iterable[int]) -> tuple[int, int] | None:
    """The first (resource index, tick) where ``tasks`` at ``starts`` exceed a capacity, or None."""
    chosen = list(tasks)
    for m, cap in enumerate(problem.capacity):
        changes: dict[int, int] = {}
        for i in chosen:
            for p in problem.pieces[i]:
                if p.demand[m]:
                    begin = starts[i] + p.offset
                    changes[begin] = changes.get(begin, 0) + p.demand[m]
                    changes[begin + p.size] = changes.get(begin + p.size, 0) - p.demand[m]
        load = 0
        for time in sorted(changes):
            load += changes[time]
            if load > cap:
                return m, time
    return None


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
    """Tasks one after another in ``order`` (a topological order): always feasible.

    With fixed starts or release times, :func:`around_pins` in that order instead.
    """
    if problem.pinned:
        return around_pins(problem, order)
    starts = [0] * problem.size
    clock = 0
    for i in order:
        starts[i] = clock
        clock += problem.length[i]
    return starts


def around_pins(problem: IntegerProblem, order: Sequence[int]) -> list[int]:
    """Serial schedule generation around the pins: fixed tasks where fixed, the others in ``order``.

    Each other task (``order`` is topological) starts at the earliest tick from its release
    and its predecessors' ends where each of its pieces fits the load of the tasks already
    placed. It always finds one (demands are clamped, so after every placed task it fits), so
    the schedule is feasible whenever the fixed tasks are (:func:`peakopt.solver.pins.pin`
    checks that they fit together and keep their precedences).
    """
    fixed = problem.fixed or (None,) * problem.size
    starts = [0] * problem.size
    placed: list[int] = []
    for i, at in enumerate(fixed):
        if at is not None:
            starts[i] = at
            placed.append(i)
    for i in order:
        if fixed[i] is not None:
            continue
        earliest = max([problem.release[i], *(starts[p] + problem.length[p] for p in problem.preds[i])])
        ends = {starts[j] + q.offset + q.size for j in placed for q in problem.pieces[j]}
        candidates = sorted({earliest} | {e - p.offset for e in ends for p in problem.pieces[i]})
        for t in candidates:
            starts[i] = t
            if t >= earliest and overflow(problem, starts, [*placed, i]) is None:
                break
        placed.append(i)
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
