"""Policies agent runtimes actually run: ASAP, one at a time, K in flight, semaphores.

These simulate an executor in event order rather than plan ahead: a step
starts when it is ready and admitted, and capacity is held for the whole step. ``cap:K`` and
the semaphores run the oracle's event loop at nominal durations with the deciders of
:mod:`peakopt.oracle.uncertain.policies` (the same ones their online forms use); ASAP and one at
a time need no loop: their starts are the earliest starts and a running sum.
"""

from __future__ import annotations

from collections.abc import Sequence

from peakopt.oracle.uncertain.dispatch import dispatch
from peakopt.oracle.uncertain.policies import admission_decider, slots_decider
from peakopt.solver.heuristics.arrays import Need, Problem


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
    unused: list[tuple[Need, ...]] = [()] * problem.size
    decide = slots_decider(limit)
    return dispatch(problem.length, problem.preds, problem.succs, unused, (), decide, problem.ids)


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
    whose needs fit the free capacity starts
    (:func:`~peakopt.oracle.uncertain.policies.admission_decider`).

    Returns
    -------
    list of float
        Start times by task position.
    """
    decide = admission_decider(needs, strict=strict)
    return dispatch(problem.length, problem.preds, problem.succs, needs, capacity, decide, problem.ids)
