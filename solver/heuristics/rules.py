"""Priority rules for the schedule-generation schemes (Kolisch 1996; lower key first).

Time-based rules use the precedence-only critical-path method (CPM): earliest
starts from a forward pass, latest starts and finishes from a backward pass
against the critical-path length.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from peakopt.oracle.base.instants import tied
from peakopt.solver.heuristics.arrays import Problem

Keys = list[float]


def latest_finish(problem: Problem) -> Keys:
    """LFT: latest finish time, earliest first."""
    horizon = problem.critical_path
    return [horizon - t + d for t, d in zip(problem.tail, problem.length, strict=True)]


def latest_start(problem: Problem) -> Keys:
    """LST: latest start time, earliest first."""
    horizon = problem.critical_path
    return [horizon - t for t in problem.tail]


def most_successors(problem: Problem) -> Keys:
    """MTS: most total (transitive) successors first."""
    below = [0] * problem.size  # bit set of all successors, built leaves first
    for task in reversed(problem.topo):
        for succ in problem.succs[task]:
            below[task] |= below[succ] | 1 << succ
    return [-float(b.bit_count()) for b in below]


def rank_positional_weight(problem: Problem) -> Keys:
    """GRPW: greatest own plus immediate successors' duration first."""
    length = problem.length
    return [-(length[j] + sum(length[s] for s in problem.succs[j])) for j in range(problem.size)]


def shortest(problem: Problem) -> Keys:
    """SPT: shortest run first."""
    return list(problem.length)


def longest(problem: Problem) -> Keys:
    """LPT: longest run first."""
    return [-d for d in problem.length]


def least_slack(problem: Problem) -> Keys:
    """CP: critical-path first — least total float (latest minus earliest start)."""
    horizon = problem.critical_path
    return [horizon - t - e for t, e in zip(problem.tail, problem.early, strict=True)]


def resource_pressure(problem: Problem) -> Keys:
    """NRP: most normalised resource work first — Σ duration × need / capacity."""
    cap = problem.capacity
    return [
        -sum(duration * amount / cap[k] for _, duration, needs in blocks for k, amount, _ in needs)
        for blocks in problem.blocks
    ]


def ready_order(problem: Problem) -> Keys:
    """FIFO: in the order tasks become ready when run as early as possible."""
    return list(problem.early)


#: Deterministic rules by name, in the order ``best-rule`` tries them.
RULES: dict[str, Callable[[Problem], Keys]] = {
    "lft": latest_finish,
    "lst": latest_start,
    "mts": most_successors,
    "grpw": rank_positional_weight,
    "spt": shortest,
    "lpt": longest,
    "cp": least_slack,
    "nrp": resource_pressure,
    "fifo": ready_order,
}

#: Every rule name, ``random`` (seeded uniform keys) included.
RULE_NAMES = (*RULES, "random")


def rule_keys(problem: Problem, rule: str, rng: random.Random | None = None) -> Keys:
    """Priority keys of ``rule`` (one of :data:`RULE_NAMES`); ``random`` needs ``rng``.

    Keys that are the same instant for the judge are made equal (:func:`~peakopt.oracle.base.instants.tied`):
    an LFT of 0.30000000000000004 and one of 0.3 tie, and the tie goes by position, as it does
    when the same data are written in tenths of a second.
    """
    if rule == "random":
        if rng is None:
            raise ValueError("the random rule needs a random generator")
        return [rng.random() for _ in range(problem.size)]
    return tied(RULES[rule](problem))
