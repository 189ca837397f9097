"""Forward-backward improvement (justification; Tormos & Lova 2001, Valls et al. 2005).

A backward pass schedules the tasks right-justified, latest finish first; a
forward pass then schedules them left-justified in the order of those
right-justified starts. Repeating the pair closes gaps the first schedule
left. Measured on PSPLIB j30 (see the README), a parallel backward pass
followed by both a serial and a parallel forward pass, keeping the shorter,
beats the classic serial-serial pair clearly (parallel LFT: 2.43 % -> 1.96 %
mean deviation) for three passes per round instead of two. Given a ``halt``,
the improvement is anytime: it returns the best schedule of the rounds it
finished once ``halt`` is true, within :data:`~.sgs.CHECK_EVERY` tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from peakopt.oracle.base.instants import tied
from peakopt.solver.heuristics.arrays import Problem
from peakopt.solver.heuristics.sgs import Stopped, parallel_sgs, serial_sgs

#: Forward-backward rounds at most; it usually settles in two or three.
MAX_ROUNDS = 8


def positions(order: Sequence[int]) -> list[float]:
    """Priority keys that make a scheme follow ``order`` (a task's place in it)."""
    keys = [0.0] * len(order)
    for place, task in enumerate(order):
        keys[task] = float(place)
    return keys


def backward_forward(
    problem: Problem,
    start: list[float],
    *,
    serial_only: bool = False,
    halt: Callable[[], bool] | None = None,
) -> list[float]:
    """One round on the feasible schedule ``start``: right-justify it, then left-justify the result.

    Returns the shorter of the serial and the parallel forward pass (feasible;
    callers keep whichever of it and ``start`` is shorter); with ``serial_only``
    both passes are serial (Valls et al.'s double justification, about three
    times cheaper). Each pass polls ``halt`` (:class:`~.sgs.Stopped` once it is true).
    """
    length, rank = problem.length, problem.rank
    # ends that are the same instant for the judge tie (whatever float sums reached them)
    finish = tied([s + d for s, d in zip(start, length, strict=True)])
    # latest finish first; on a tie a successor (higher rank) first, as the reverse needs
    back_order = sorted(range(problem.size), key=lambda j: (-finish[j], -rank[j]))
    if serial_only:
        back = serial_sgs(problem.reverse, back_order, halt)
    else:
        back = parallel_sgs(problem.reverse, positions(back_order), halt)
    # in forward time a backward run [b, b + d) starts at -(b + d): sort on that
    ends = tied([b + d for b, d in zip(back, length, strict=True)])
    order = sorted(range(problem.size), key=lambda j: (-ends[j], rank[j]))
    serial = serial_sgs(problem, order, halt)
    if serial_only:
        return serial
    parallel = parallel_sgs(problem, positions(order), halt)
    # makespans within the slack are one (float sums differ by time unit): serial wins the tie
    return serial if problem.makespan(serial) <= problem.makespan(parallel) + problem.eps else parallel


def improve(
    problem: Problem,
    start: list[float],
    rounds: int = MAX_ROUNDS,
    *,
    serial_only: bool = False,
    halt: Callable[[], bool] | None = None,
) -> tuple[list[float], float]:
    """Forward-backward improvement until a round gains nothing.

    Parameters
    ----------
    problem
        The instance.
    start
        A feasible schedule (start times by position).
    rounds
        Most rounds to run.
    serial_only
        Serial passes only (see :func:`backward_forward`).
    halt
        Polled inside every pass: once true, the round in progress is given up.

    Returns
    -------
    tuple
        The best schedule seen and its makespan (``start`` itself when halted in the first round).
    """
    best, best_span = start, problem.makespan(start)
    bound = problem.lower_bound + problem.eps
    for _ in range(rounds):
        if best_span <= bound:
            break
        try:
            candidate = backward_forward(problem, best, serial_only=serial_only, halt=halt)
        except Stopped:
            break
        span = problem.makespan(candidate)
        if span >= best_span - problem.eps:
            break
        best, best_span = candidate, span
    return best, best_span
