"""Policies agent runtimes actually run: ASAP, one at a time, K in flight, semaphores.

These simulate an executor in event order rather than plan ahead: a step
starts when it is ready and admitted, and capacity is held for the whole step.
"""

from __future__ import annotations

from collections.abc import Sequence

from peakopt.oracle.uncertain.dispatch import admitted, dispatch
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
    """Event simulation of admission in ready order: the oracle's event loop at nominal durations.

    Steps join a queue when their last predecessor finishes (together in
    input order); at each event the queue is scanned in order and every step
    whose needs fit the free capacity starts (:func:`peakopt.oracle.uncertain.dispatch.admitted`).

    Returns
    -------
    list of float
        Start times by task position.
    """

    def scan(now: float, queue: list[int], running: dict[int, float], free: list[float]) -> list[int]:
        return admitted(queue, needs, free, strict=strict)

    return dispatch(problem.length, problem.preds, problem.succs, needs, capacity, scan, problem.ids)
