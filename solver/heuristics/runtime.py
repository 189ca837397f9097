"""Policies agent runtimes actually run: ASAP, one at a time, K in flight, semaphores.

These simulate an executor in event order rather than plan ahead: a step
starts when it is ready and admitted, and capacity is held for the whole step.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from peakopt.solver.heuristics.arrays import LOAD_SLACK, Need, Problem


def asap(problem: Problem) -> list[float]:
    """Every step at its earliest ready time, resources ignored (LLMCompiler-style)."""
    return list(problem.early)


def one_at_a_time(problem: Problem) -> list[float]:
    """One step at a time in topological order (attains the oracle's cva_floor)."""
    start = [0.0] * problem.size
    now = 0.0
    for task in problem.topo:
        start[task] = now
        now += problem.length[task]
    return start


def in_flight(problem: Problem, limit: int) -> list[float]:
    """At most ``limit`` steps running at once, resources ignored (an SDK's max concurrency)."""
    slot: tuple[Need, ...] = ((0, 1.0, 1.0 - LOAD_SLACK * limit),)
    return admit(problem, [slot] * problem.size, (float(limit),), strict=False)


def semaphores(problem: Problem, *, strict: bool = False) -> list[float]:
    """Per-resource semaphores: each step holds its clamped peak demand for its whole run.

    Parameters
    ----------
    problem
        The instance.
    strict
        Head-of-line blocking: a ready step that does not fit stops the steps
        behind it. By default later ready steps that fit go first (greedy).
    """
    return admit(problem, problem.peak, problem.capacity, strict=strict)


def admit(
    problem: Problem, needs: Sequence[tuple[Need, ...]], capacity: tuple[float, ...], *, strict: bool
) -> list[float]:
    """Event simulation of greedy admission in ready order.

    Steps join a queue when their last predecessor finishes (together in
    input order); at each event the queue is scanned in order and every step
    whose needs fit the free capacity starts.

    Returns
    -------
    list of float
        Start times by task position.
    """
    length, succs = problem.length, problem.succs
    left = [len(p) for p in problem.preds]
    queue = [j for j, count in enumerate(left) if not count]
    running: list[tuple[float, int]] = []
    free = list(capacity)
    start = [0.0] * problem.size
    now = 0.0
    while queue or running:
        queue = _admit_ready(queue, needs, free, strict, now, start, running, length)
        now = running[0][0]
        released: list[int] = []
        while running and running[0][0] <= now:
            task = heapq.heappop(running)[1]
            for k, amount, _ in needs[task]:
                free[k] += amount
            for succ in succs[task]:
                left[succ] -= 1
                if not left[succ]:
                    released.append(succ)
        if not running:
            free = list(capacity)  # nothing holds capacity: drop floating-point residue
        queue.extend(sorted(released))
    return start


def _admit_ready(
    queue: list[int],
    needs: Sequence[tuple[Need, ...]],
    free: list[float],
    strict: bool,
    now: float,
    start: list[float],
    running: list[tuple[float, int]],
    length: tuple[float, ...],
) -> list[int]:
    """Start every queued step that fits now; return the steps still waiting."""
    waiting: list[int] = []
    for task in queue:
        need = needs[task]
        if (not strict or not waiting) and all(free[k] >= threshold for k, _, threshold in need):
            for k, amount, _ in need:
                free[k] -= amount
            start[task] = now
            heapq.heappush(running, (now + length[task], task))
        else:
            waiting.append(task)
    return waiting
