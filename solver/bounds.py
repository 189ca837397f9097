"""Lower bounds on the optimal makespan: critical path, energy, disjunctive cliques."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import TypeVar

from peakopt.models import Machine, Workflow
from peakopt.models.workflow import longest_chains
from peakopt.oracle.base.exact import fraction
from peakopt.solver.conflicts import Node
from peakopt.solver.scaling import IntegerProblem

#: Ticks or exact seconds.
N = TypeVar("N", int, Fraction)


def heads(problem: IntegerProblem) -> list[int]:
    """Earliest start of each task, from precedences and release times (ticks)."""
    if problem.pinned:
        return chains_from(problem, problem.length, list(problem.release))
    return longest_chains(problem.order, problem.preds, problem.length, 0)[0]


def chains_from(problem: IntegerProblem, length: Sequence[N], head: list[N]) -> list[N]:
    """Earliest starts from ``head`` (each task's own earliest) and the precedences, in ``length``'s unit."""
    for j in problem.order:
        for i in problem.preds[j]:
            head[j] = max(head[j], head[i] + length[i])
    return head


def tails(problem: IntegerProblem) -> list[int]:
    """Shortest time that must follow each task's end, from precedences alone (ticks)."""
    return longest_chains(problem.order, problem.preds, problem.length, 0)[1]


def windows(problem: IntegerProblem, horizon: int) -> list[tuple[int, int]]:
    """Earliest and latest start of each task in a schedule ending by ``horizon`` (ticks).

    From precedences and release times (never latest < earliest: a horizon too short is
    the makespan's constraint to refuse); a fixed task's window is its fixed tick alone.
    """
    head, tail = heads(problem), tails(problem)
    fixed = problem.fixed or (None,) * problem.size
    return [
        (at, at) if at is not None else (head[i], max(head[i], horizon - problem.length[i] - tail[i]))
        for i, at in enumerate(fixed)
    ]


def critical_path(problem: IntegerProblem) -> int:
    """Length of the longest precedence chain (ticks)."""
    head = heads(problem)
    return max((h + d for h, d in zip(head, problem.length, strict=True)), default=0)


def energy_bound(problem: IntegerProblem) -> int:
    """Per resource, total demand × time over capacity, rounded up; the largest (ticks).

    With release times, also each release ``r`` plus the energy of the tasks released at ``r``
    or later (they all run after ``r``).
    """
    best = 0
    cuts = sorted(set(problem.release)) if problem.pinned else [0]
    for m, cap in enumerate(problem.capacity):
        energy = [sum(p.size * p.demand[m] for p in pieces) for pieces in problem.pieces]
        for cut in cuts:
            after = sum(
                e for e, r in zip(energy, problem.release or [0] * problem.size, strict=True) if r >= cut
            )
            best = max(best, cut + -(-after // cap))
    return best


def clique_bound(problem: IntegerProblem, cliques: list[list[Node]]) -> int:
    """Largest ``min head + total size + min tail`` over cliques of pieces that run one at a time."""
    head, tail = heads(problem), tails(problem)
    best = 0
    for clique in cliques:
        first = min(head[n.task] + problem.pieces[n.task][n.piece].offset for n in clique)
        last = min(tail[n.task] + problem.length[n.task] - _piece_end(problem, n) for n in clique)
        total = sum(problem.pieces[n.task][n.piece].size for n in clique)
        best = max(best, first + total + last)
    return best


def _piece_end(problem: IntegerProblem, node: Node) -> int:
    piece = problem.pieces[node.task][node.piece]
    return piece.offset + piece.size


def lower_bound(problem: IntegerProblem, cliques: list[list[Node]]) -> int:
    """The best of the critical-path, energy and clique bounds (ticks)."""
    return max(critical_path(problem), energy_bound(problem), clique_bound(problem, cliques))


def real_lower_bound(workflow: Workflow, machine: Machine) -> Fraction:
    """Critical-path and energy bounds in seconds from the unscaled data, exactly, whatever the scaling.

    Computed on the shortest decimals (round it to a float with
    :func:`float_below`); used when the scaled problem was rounded, whose own
    bounds are then bounds of the rounded problem, not of the real one.
    """
    lengths = real_lengths(workflow)
    heads, _ = longest_chains(workflow.topological_order, workflow.predecessors, lengths, Fraction(0))
    best = max(h + d for h, d in zip(heads, lengths, strict=True))
    for resource, cap in machine.capacity.items():
        capacity = fraction(cap)
        energy = sum(
            (
                fraction(s.duration) * min(fraction(s.demand.get(resource, 0.0)), capacity)
                for t in workflow.tasks
                for s in t.segments
            ),
            Fraction(0),
        )
        best = max(best, energy / capacity)
    return best


def real_lengths(workflow: Workflow) -> list[Fraction]:
    """Each task's run time in seconds, the exact sum of its segments' shortest decimals."""
    return [sum((fraction(s.duration) for s in t.segments), Fraction(0)) for t in workflow.tasks]


def float_below(value: Fraction) -> float:
    """The largest float whose shortest decimal is at most ``value`` (a bound rounded the safe way)."""
    x = float(value)
    while fraction(x) > value:
        x = math.nextafter(x, -math.inf)
    return x
