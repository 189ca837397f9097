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

import itertools
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from peakopt.solver.scaling import IntegerProblem

#: At most this many cliques are kept (each becomes one constraint).
MAX_CLIQUES = 256
#: Conflict matrices are built for at most this many pieces (n × n of them: 10,000 pieces took
#: 10 s and 800 MB); larger problems get no cliques and no ordering literals.
MAX_MATRIX_PIECES = 3000
#: Most disjunctive pairs given an ordering literal.
MAX_PAIRS = 5000
#: Forbidden sets are looked for only among this many pieces, and at most this many kept.
MAX_SET_PIECES = 40
MAX_SETS = 3000


@dataclass(frozen=True)
class Node:
    """A piece of positive size: task ``task``, its piece number ``piece``."""

    task: int
    piece: int


def reachability(problem: IntegerProblem) -> NDArray[np.bool_]:
    """``reach[i, j]`` when task ``j`` transitively depends on task ``i``."""
    n = problem.size
    reach = np.zeros((n, n), dtype=bool)
    for j in problem.order:
        for i in problem.preds[j]:
            reach[:, j] |= reach[:, i]
            reach[i, j] = True
    return reach


def nodes(problem: IntegerProblem) -> list[Node]:
    """Every piece of positive size."""
    return [Node(i, k) for i, pieces in enumerate(problem.pieces) for k, p in enumerate(pieces) if p.size > 0]


def resource_conflicts(problem: IntegerProblem, found: list[Node]) -> NDArray[np.bool_]:
    """``conflict[a, b]`` when pieces ``a`` and ``b`` together exceed some capacity."""
    demand = np.array(
        [problem.pieces[node.task][node.piece].demand for node in found], dtype=np.int64
    ).reshape(len(found), len(problem.resources))
    conflict = np.zeros((len(found), len(found)), dtype=bool)
    for m, cap in enumerate(problem.capacity):
        column = demand[:, m]
        conflict |= column[:, None] + column[None, :] > cap
    return conflict


def ordered(problem: IntegerProblem, found: list[Node]) -> NDArray[np.bool_]:
    """``ordered[a, b]`` when the tasks of pieces ``a`` and ``b`` are the same or ordered by precedence."""
    tasks = np.array([node.task for node in found], dtype=np.int64)
    reach = reachability(problem)[np.ix_(tasks, tasks)]
    same: NDArray[np.bool_] = tasks[:, None] == tasks[None, :]
    return same | reach | reach.T


def conflict_matrix(problem: IntegerProblem, found: list[Node]) -> NDArray[np.bool_]:
    """``conflict[a, b]`` when pieces ``a`` and ``b`` can never overlap."""
    conflict = resource_conflicts(problem, found) | ordered(problem, found)
    np.fill_diagonal(conflict, False)
    return conflict


def disjunctive_pairs(problem: IntegerProblem, limit: int = MAX_PAIRS) -> list[tuple[Node, Node]]:
    """Pairs of pieces that exceed a capacity together and that no precedence orders yet.

    Empty when there are more than ``limit`` (each pair costs a literal and two constraints).
    """
    found = nodes(problem)
    if not 2 <= len(found) <= MAX_MATRIX_PIECES:
        return []
    free = resource_conflicts(problem, found) & ~ordered(problem, found)
    rows, cols = np.nonzero(np.triu(free, 1))
    if len(rows) > limit:
        return []
    return [(found[a], found[b]) for a, b in zip(rows.tolist(), cols.tolist(), strict=True)]


def greedy_cliques(problem: IntegerProblem, limit: int = MAX_CLIQUES) -> list[list[Node]]:
    """Maximal cliques grown greedily from each piece, longest pieces first.

    Only cliques with at least two pieces that are not contained in an
    earlier one are kept, up to ``limit``.
    """
    found = nodes(problem)
    if not 2 <= len(found) <= MAX_MATRIX_PIECES:
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


def forbidden_sets(problem: IntegerProblem, limit: int = MAX_SETS) -> list[tuple[Node, ...]]:
    """Minimal sets of three or four pieces that exceed a capacity together (no pair of them does).

    In every schedule two pieces of such a set are ordered one after the
    other. Only for small problems (at most :data:`MAX_SET_PIECES` pieces);
    sets whose pieces are ordered by precedence already are left out.
    """
    found = nodes(problem)
    if not 3 <= len(found) <= MAX_SET_PIECES:
        return []
    demand = np.array([problem.pieces[n.task][n.piece].demand for n in found], dtype=np.int64)
    demand = demand.reshape(len(found), len(problem.resources))
    capacity = np.array(problem.capacity, dtype=np.int64)
    free = ~resource_conflicts(problem, found) & ~ordered(problem, found)
    sets: list[tuple[int, ...]] = []
    triples: set[tuple[int, ...]] = set()
    for members in _cliques_of(free, 3) + _cliques_of(free, 4):
        if len(members) == 4 and any(t in triples for t in itertools.combinations(members, 3)):
            continue
        if (demand[list(members)].sum(axis=0) > capacity).any():
            sets.append(members)
            if len(members) == 3:
                triples.add(members)
        if len(sets) >= limit:
            break
    return [tuple(found[k] for k in members) for members in sets]


def _cliques_of(free: NDArray[np.bool_], size: int) -> list[tuple[int, ...]]:
    """Index tuples of ``size`` pieces, increasing, every pair of them free to overlap."""
    return [
        members
        for members in itertools.combinations(range(len(free)), size)
        if all(free[a, b] for a, b in itertools.combinations(members, 2))
    ]


@dataclass(frozen=True)
class ConflictStructure:
    """What the model adds beyond the textbook: cliques, disjunctive pairs, forbidden sets."""

    cliques: list[list[Node]]
    pairs: list[tuple[Node, Node]]
    sets: list[tuple[Node, ...]]


def conflict_structure(problem: IntegerProblem, cliques: list[list[Node]] | None = None) -> ConflictStructure:
    """Greedy cliques (unless given), and on fine grids the disjunctive pairs and forbidden sets.

    Ordering literals pay off where start times have many values (0.01 s
    ticks); on PSPLIB's coarse grid they slowed the proof of j3013_1 from
    7 s to 18 s.
    """
    cliques = greedy_cliques(problem) if cliques is None else cliques
    if problem.coarse:
        return ConflictStructure(cliques, [], [])
    return ConflictStructure(cliques, disjunctive_pairs(problem), forbidden_sets(problem))
