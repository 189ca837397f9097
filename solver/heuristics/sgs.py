"""Schedule-generation schemes: serial (activity lists) and parallel (time-stepped).

Both read a :class:`~peakopt.solver.heuristics.arrays.Problem` and return
start times by task position. Priorities are keys, lower first; ties go to
the earlier input position (Kolisch's lowest-activity-number rule). Given a
``halt`` callable, a scheme polls it every :data:`CHECK_EVERY` tasks (decision
times, for the parallel one) and raises :class:`Stopped` once it is true, so
that a search with a deadline gives up a schedule in progress (a pass over
1,000 tasks takes a tenth of a second).
"""

from __future__ import annotations

import heapq
from bisect import insort
from collections.abc import Callable, Sequence

from peakopt.models.workflow import topological_order
from peakopt.oracle.base.instants import same_instant
from peakopt.solver.heuristics.arrays import Problem
from peakopt.solver.heuristics.timeline import Timeline

#: Tasks (decision times) a scheme places between two polls of its ``halt``.
CHECK_EVERY = 64


class Stopped(Exception):
    """A scheme's ``halt`` became true: the schedule it was building is unfinished."""


def _poll(halt: Callable[[], bool] | None) -> None:
    """Raise :class:`Stopped` if ``halt`` is given and true."""
    if halt is not None and halt():
        raise Stopped


def priority_order(problem: Problem, keys: Sequence[float]) -> list[int]:
    """The activity list a serial SGS picks with static priorities ``keys``.

    At each step the eligible task (all predecessors listed) with the lowest
    key comes next, so the list is precedence-feasible.
    """
    return list(topological_order(problem.preds, keys))


def serial_sgs(problem: Problem, order: Sequence[int], halt: Callable[[], bool] | None = None) -> list[float]:
    """Serial SGS: each task of ``order`` at its earliest feasible start.

    Parameters
    ----------
    problem
        The instance.
    order
        A precedence-feasible activity list (predecessors first).
    halt
        Polled before every :data:`CHECK_EVERY` tasks; true raises :class:`Stopped`.

    Returns
    -------
    list of float
        Start times by task position; dependency-valid, and within the
        (clamped) capacities at every instant.
    """
    preds, length, blocks = problem.preds, problem.length, problem.blocks
    start = [0.0] * problem.size
    finish = [0.0] * problem.size
    place = Timeline(problem.capacity, problem.eps).place
    for first in range(0, len(order), CHECK_EVERY):
        _poll(halt)
        for task in order[first : first + CHECK_EVERY]:
            ready = 0.0
            for pred in preds[task]:
                if finish[pred] > ready:
                    ready = finish[pred]
            need = blocks[task]
            if need:
                ready = place(ready, need)
            start[task] = ready
            finish[task] = ready + length[task]
    return start


def parallel_sgs(
    problem: Problem, keys: Sequence[float], halt: Callable[[], bool] | None = None
) -> list[float]:
    """Parallel SGS: at each decision time, start the fitting eligible tasks by priority.

    Decision times are 0, finish times and the times when the free capacity
    changes (piecewise profiles free capacity mid-task); a task that fits
    from a decision time over its whole run starts then.

    Parameters
    ----------
    problem
        The instance.
    keys
        Priority per task, lower first.
    halt
        Polled every :data:`CHECK_EVERY` decision times; true raises :class:`Stopped`.

    Returns
    -------
    list of float
        Start times by task position (a non-delay schedule).
    """
    succs, length, blocks = problem.succs, problem.length, problem.blocks
    left = [len(p) for p in problem.preds]
    ready = [0.0] * problem.size
    pending = [(0.0, keys[j], j) for j, count in enumerate(left) if not count]  # heap by ready time
    eligible: list[tuple[float, int]] = []  # (key, task), sorted
    start = [0.0] * problem.size
    timeline = Timeline(problem.capacity, problem.eps)
    conflict, book = timeline.conflict, timeline.book
    now = 0.0
    remaining = problem.size
    steps = 0
    while remaining:
        steps += 1
        if not steps % CHECK_EVERY:
            _poll(halt)
        while pending and _due(pending[0][0], now):
            _, key, task = heapq.heappop(pending)
            insort(eligible, (key, task))
        waiting = []
        for key, task in eligible:
            need = blocks[task]
            if need:
                if conflict(now, need) is not None:
                    waiting.append((key, task))
                    continue
                book(now, need)
            start[task] = now
            remaining -= 1
            end = now + length[task]
            for succ in succs[task]:
                left[succ] -= 1
                if end > ready[succ]:
                    ready[succ] = end
                if not left[succ]:
                    heapq.heappush(pending, (ready[succ], keys[succ], succ))
        eligible = waiting
        # else zero-length tasks released some now
        if remaining and not (pending and _due(pending[0][0], now)):
            now = _next_time(now, pending, timeline)
    return start


def _due(ready: float, now: float) -> bool:
    """Whether a release at ``ready`` is due at ``now``: not later, or the same instant for the judge."""
    return ready <= now or same_instant(ready, now)


def _next_time(now: float, pending: list[tuple[float, float, int]], timeline: Timeline) -> float:
    """The next decision time after ``now``: a release or a change of free capacity."""
    boundary = timeline.after(now)
    if pending and (boundary is None or pending[0][0] < boundary):
        return pending[0][0]
    if boundary is None:  # a waiting task that does not fit implies capacity frees up later
        raise RuntimeError("parallel SGS stalled: no later decision time")
    return boundary
