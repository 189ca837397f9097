"""Forward-backward improvement (double justification; Tormos & Lova 2001, Valls et al. 2005).

A backward pass schedules the tasks right-justified — latest finish first, each
as late as possible — then a forward pass schedules them left-justified in the
order of those right-justified starts. Neither pass lengthens the schedule;
repeating them closes gaps the first schedule left.
"""

from __future__ import annotations

from peakopt.solver.heuristics.arrays import Problem
from peakopt.solver.heuristics.sgs import serial_sgs

#: Forward-backward rounds at most; it usually settles in two or three.
MAX_ROUNDS = 8


def backward_forward(problem: Problem, start: list[float]) -> list[float]:
    """One round: right-justify ``start``, then left-justify the result.

    Parameters
    ----------
    problem
        The instance.
    start
        A feasible schedule (start times by position).

    Returns
    -------
    list of float
        A feasible schedule from a forward serial pass (never longer in
        practice; callers keep the better one).
    """
    length, rank = problem.length, problem.rank
    finish = [s + d for s, d in zip(start, length, strict=True)]
    # latest finish first; on a tie a successor (higher rank) first, as the reverse needs
    back_order = sorted(range(problem.size), key=lambda j: (-finish[j], -rank[j]))
    back = serial_sgs(problem.reverse, back_order)
    # in forward time a backward start b becomes -(b + d): sort on that
    ends = [b + d for b, d in zip(back, length, strict=True)]
    order = sorted(range(problem.size), key=lambda j: (-ends[j], rank[j]))
    return serial_sgs(problem, order)


def improve(problem: Problem, start: list[float], rounds: int = MAX_ROUNDS) -> tuple[list[float], float]:
    """Forward-backward improvement until a round gains nothing.

    Parameters
    ----------
    problem
        The instance.
    start
        A feasible schedule (start times by position).
    rounds
        Most rounds to run.

    Returns
    -------
    tuple
        The best schedule seen and its makespan.
    """
    best, best_span = start, problem.makespan(start)
    bound = problem.lower_bound + problem.eps
    for _ in range(rounds):
        if best_span <= bound:
            break
        candidate = backward_forward(problem, best)
        span = problem.makespan(candidate)
        if span >= best_span - problem.eps:
            break
        best, best_span = candidate, span
    return best, best_span
