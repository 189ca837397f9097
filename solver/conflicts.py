"""Pairs of task pieces that can never run at the same time, and greedy cliques of them.

Agent workflows on small machines are nearly disjunctive: two steps whose
clamped demands together exceed a capacity never overlap, and an
over-capacity step (clamped to the full capacity) excludes every other user
of that resource. Pieces ordered by precedence, and pieces of one task, are
disjoint too. A clique of this graph is a set of pieces that run one at a
time: a redundant no-overlap constraint for CP-SAT and a lower bound (its
total size between the earliest head and the shortest tail).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from peakopt.solver.scaling import Problem

#: At most this many cliques are kept (each becomes one constraint).
MAX_CLIQUES = 256


@dataclass(frozen=True)
class Node:
    """A piece of positive size: task ``task``, its piece number ``piece``."""

    task: int
    piece: int


def topological_order(problem: Problem) -> list[int]:
    """Task indices, every predecessor before its successors."""
    pending = [len(p) for p in problem.preds]
    succs: list[list[int]] = [[] for _ in problem.ids]
    for j, preds in enumerate(problem.preds):
        for i in preds:
            succs[i].append(j)
    order = [i for i, n in enumerate(pending) if n == 0]
    for i in order:  # the list grows while it is read: Kahn's algorithm
        for j in succs[i]:
            pending[j] -= 1
            if pending[j] == 0:
                order.append(j)
    return order


def reachability(problem: Problem) -> NDArray[np.bool_]:
    """``reach[i, j]`` when task ``j`` transitively depends on task ``i``."""
    n = problem.size
    reach = np.zeros((n, n), dtype=bool)
    for j in topological_order(problem):
        for i in problem.preds[j]:
            reach[:, j] |= reach[:, i]
            reach[i, j] = True
    return reach


def nodes(problem: Problem) -> list[Node]:
    """Every piece of positive size."""
    return [Node(i, k) for i, pieces in enumerate(problem.pieces) for k, p in enumerate(pieces) if p.size > 0]


def conflict_matrix(problem: Problem, found: list[Node]) -> NDArray[np.bool_]:
    """``conflict[a, b]`` when pieces ``a`` and ``b`` can never overlap."""
    tasks = np.array([node.task for node in found], dtype=np.int64)
    demand = np.array(
        [problem.pieces[node.task][node.piece].demand for node in found], dtype=np.int64
    ).reshape(len(found), len(problem.resources))
    conflict: NDArray[np.bool_] = tasks[:, None] == tasks[None, :]
    for m, cap in enumerate(problem.capacity):
        column = demand[:, m]
        conflict |= column[:, None] + column[None, :] > cap
    reach = reachability(problem)
    conflict |= reach[np.ix_(tasks, tasks)] | reach[np.ix_(tasks, tasks)].T
    np.fill_diagonal(conflict, False)
    return conflict


def greedy_cliques(problem: Problem, limit: int = MAX_CLIQUES) -> list[list[Node]]:
    """Maximal cliques grown greedily from each piece, longest pieces first.

    Only cliques with at least two pieces that are not contained in an
    earlier one are kept, up to ``limit``.
    """
    found = nodes(problem)
    if len(found) < 2:
        return []
    conflict = conflict_matrix(problem, found)
    sizes = np.array([problem.pieces[n.task][n.piece].size for n in found])
    by_size = np.argsort(-sizes, kind="stable")
    cliques: list[list[int]] = []
    covered = np.zeros(len(found), dtype=bool)
    for seed in by_size:
        if covered[seed] or not conflict[seed].any():
            continue
        members = [int(seed)]
        allowed = conflict[seed].copy()
        for other in by_size:
            if allowed[other]:
                members.append(int(other))
                allowed &= conflict[other]
        covered[members] = True
        cliques.append(members)
        if len(cliques) >= limit:
            break
    return [[found[k] for k in members] for members in cliques]
