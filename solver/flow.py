"""The resource flow of a schedule: which pieces pass units to which, and the left shift it allows.

A feasible schedule gives, per resource, a flow of capacity units: each
piece, in order of start, takes its units from pieces that have ended by then
(or from the source). The transfers, as precedences "a ends before b
starts", make a partial-order schedule: any schedule that respects them and
the workflow's precedences is feasible (pieces running together are
unordered by the flow, so the units they hold come from disjoint transfers,
at most the capacity). LNS keeps what it does not relax chained this way
(:mod:`peakopt.solver.lns`); :func:`left_shift` moves every task to its
earliest start under these chains, a schedule no longer than the given one,
in time linear in the chains.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from peakopt.solver.conflicts import Node, nodes
from peakopt.solver.scaling import IntegerProblem


@dataclass
class _Holder:
    """Units of a resource held by a scheduled piece, given on to pieces that start once it ends."""

    end: int
    node: Node
    units: int


def chains(problem: IntegerProblem, starts: Sequence[int], kept: set[int]) -> set[tuple[Node, Node]]:
    """Piece precedences "a ends before b starts" of a resource flow of the incumbent among ``kept`` tasks.

    Per resource, pieces in order of start take their units from pieces that
    have ended by then (the latest ended first, which keeps chains short), or
    from the source; each transfer is an edge. Feasibility of ``starts``
    guarantees the units are there.
    """
    edges: set[tuple[Node, Node]] = set()
    found = [n for n in nodes(problem) if n.task in kept]

    def begin(n: Node) -> int:
        return starts[n.task] + problem.pieces[n.task][n.piece].offset

    def finish(n: Node) -> int:
        return begin(n) + problem.pieces[n.task][n.piece].size

    for m, cap in enumerate(problem.capacity):
        users = sorted(
            (n for n in found if problem.pieces[n.task][n.piece].demand[m] > 0),
            key=lambda n: (begin(n), n.task),
        )
        free = cap  # the source's units
        holders: list[_Holder] = []
        for node in users:
            need = problem.pieces[node.task][node.piece].demand[m]
            for holder in sorted((h for h in holders if h.end <= begin(node)), key=lambda h: -h.end):
                take = min(holder.units, need)
                holder.units -= take
                need -= take
                if holder.node.task != node.task:
                    edges.add((holder.node, node))
                if need == 0:
                    break
            holders = [h for h in holders if h.units > 0]
            take = min(free, need)  # what no ended piece gives comes from the source
            free, need = free - take, need - take
            if need > 0:
                raise ValueError("the incumbent exceeds a capacity")
            holders.append(_Holder(finish(node), node, problem.pieces[node.task][node.piece].demand[m]))
    return edges


def left_shift(problem: IntegerProblem, starts: Sequence[int]) -> list[int]:
    """Every task at its earliest start under the precedences and the resource flow of ``starts``.

    Feasible (the flow argument above) and no task later than in ``starts``.
    """
    edges = chains(problem, starts, set(range(problem.size)))
    into: list[list[tuple[int, int]]] = [[] for _ in range(problem.size)]  # (task before, its lag)
    for a, b in edges:
        first, second = problem.pieces[a.task][a.piece], problem.pieces[b.task][b.piece]
        into[b.task].append((a.task, first.offset + first.size - second.offset))
    for j, preds in enumerate(problem.preds):
        into[j].extend((i, problem.length[i]) for i in preds)
    # every constraint points from an earlier start to a later (or equal) one in ``starts``
    position = {task: k for k, task in enumerate(problem.order)}
    order = sorted(range(problem.size), key=lambda i: (starts[i], position[i]))
    shifted = [0] * problem.size
    changed = True
    while changed:  # one pass on single-piece profiles; a piece's lag can point back, hence the loop
        changed = False
        for j in order:
            earliest = max((shifted[i] + lag for i, lag in into[j]), default=0)
            if earliest > shifted[j]:
                shifted[j], changed = earliest, True
    return shifted
