"""Multi-pass regret-based biased random sampling (Drexl 1991; Kolisch 1996).

Each pass builds an activity list by drawing the next task among the eligible
ones with probability proportional to its regret — how much better its
priority is than the worst eligible one's — plus a small constant, then runs
the serial SGS on it. The first pass is the rule's own, deterministic order.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

from peakopt.solver.heuristics.arrays import Problem
from peakopt.solver.heuristics.improve import improve
from peakopt.solver.heuristics.sgs import priority_order, serial_sgs

#: The regret offset as a fraction of the mean task length: it keeps every
#: eligible task drawable and sets how strong the bias is (1 time unit on
#: PSPLIB's integer data, as in Kolisch's experiments).
REGRET_OFFSET = 0.2


def regret_offset(problem: Problem) -> float:
    """The regret offset of ``problem``: :data:`REGRET_OFFSET` of its mean task length (never 0)."""
    mean = sum(problem.length) / max(1, problem.size)
    return max(REGRET_OFFSET * mean, 1e-9)


def biased_order(problem: Problem, keys: Sequence[float], offset: float, rng: random.Random) -> list[int]:
    """A precedence-feasible activity list drawn with regret-based bias.

    Parameters
    ----------
    problem
        The instance.
    keys
        Priority per task, lower better (e.g. latest finish times).
    offset
        Added to every regret; larger means closer to uniform draws.
    rng
        The random source.
    """
    succs = problem.succs
    left = [len(p) for p in problem.preds]
    eligible = [j for j, count in enumerate(left) if not count]
    order = []
    draw = rng.random
    while eligible:
        worst = max(keys[j] for j in eligible)
        cumulative = list(accumulate(worst - keys[j] + offset for j in eligible))
        pick = bisect_right(cumulative, draw() * cumulative[-1])
        task = eligible.pop(min(pick, len(eligible) - 1))
        order.append(task)
        for succ in succs[task]:
            left[succ] -= 1
            if not left[succ]:
                eligible.append(succ)
    return order


def sample(
    problem: Problem, keys: Sequence[float], passes: int, rng: random.Random, *, justify: bool
) -> tuple[list[float], float]:
    """Best of ``passes`` biased samples, each improved by forward-backward passes if ``justify``.

    Stops early when a schedule reaches the instance's lower bound.

    Returns
    -------
    tuple
        The best schedule (start times by position) and its makespan.
    """
    offset = regret_offset(problem)
    bound = problem.lower_bound + problem.eps
    best: list[float] = []
    best_span = float("inf")
    for n in range(passes):
        order = priority_order(problem, keys) if n == 0 else biased_order(problem, keys, offset, rng)
        start = serial_sgs(problem, order)
        span = problem.makespan(start)
        if justify:
            start, span = improve(problem, start)
        if span < best_span - problem.eps:  # an equal makespan, up to float rounding, is no better
            best, best_span = start, span
            if span <= bound:
                break
    return best, best_span
