"""Energetic reasoning: a cheap proof that no schedule ends by a target, and the bound it raises.

For a target makespan ``T`` every piece has a window from precedences alone
(earliest start from its task's head, latest from its tail). In a time
interval [a, b) a piece must use at least its overlap with the interval when
shifted as far left or as far right as its window allows (the smaller of
the two: the overlap of a fixed-length piece with an interval is concave in
its start, so its minimum over the window is at an end). When those
mandatory energies exceed capacity × (b − a) for some resource, or a window
is empty, no schedule ends by ``T`` (Baptiste, Le Pape and Nuijten's
energetic reasoning, detection only; pieces of one task are relaxed to move
independently within their windows, which only weakens the test, never its
soundness). The intervals are those between the windows' ends, thinned to a
budget on large problems.

:func:`destructive_bound` raises a lower bound by it: the largest ``T``
found infeasible (by bisection, since tighter windows only make the test
fail sooner), plus one. The exact search asks CP-SAT the same question
(:mod:`peakopt.solver.search`), after this filter.
"""

from __future__ import annotations

import time

import numpy as np
from numpy.typing import NDArray

from peakopt.solver.bounds import heads, tails
from peakopt.solver.scaling import IntegerProblem

#: Intervals × pieces per resource that one test may look at (about a tenth of a second).
BUDGET = 10**6
#: Seconds :func:`destructive_bound` may spend in all.
MAX_SECONDS = 2.0


class Windows:
    """Each piece's offset in its task, size, demands, and its task's head and tail (arrays)."""

    def __init__(self, problem: IntegerProblem) -> None:
        rows = [
            (i, p.offset, p.size, p.demand)
            for i, pieces in enumerate(problem.pieces)
            for p in pieces
            if p.size > 0 and any(p.demand)
        ]
        head, tail = heads(problem), tails(problem)
        self.head = np.array([head[i] + off for i, off, _, _ in rows], dtype=np.int64)
        # latest start at T is T - (tail + length - offset): stored as the part subtracted from T
        self.before_end = np.array(
            [tail[i] + problem.length[i] - off for i, off, _, _ in rows], dtype=np.int64
        )
        self.size = np.array([s for _, _, s, _ in rows], dtype=np.int64)
        self.demand = np.array([d for _, _, _, d in rows], dtype=np.int64).reshape(
            len(rows), len(problem.resources)
        )
        self.capacity = np.array(problem.capacity, dtype=np.int64)
        self.span = max((h + d + t for h, d, t in zip(head, problem.length, tail, strict=True)), default=0)

    def infeasible(self, target: int) -> bool:
        """Whether no schedule ends by ``target``: a window is empty or an interval is overloaded."""
        if self.span > target:
            return True
        if len(self.size) == 0:
            return False
        early = self.head
        late = target - self.before_end
        starts = _thin(np.unique(np.concatenate([early, late])), len(self.size))
        ends = _thin(np.unique(np.concatenate([early + self.size, late + self.size])), len(self.size))
        for m, cap in enumerate(self.capacity):
            users = self.demand[:, m] > 0
            if not users.any():
                continue
            if _overloaded(
                early[users], late[users], self.size[users], self.demand[users, m], int(cap), starts, ends
            ):
                return True
        return False


def _thin(values: NDArray[np.int64], pieces: int) -> NDArray[np.int64]:
    """At most ``sqrt(BUDGET / pieces)`` of the sorted ``values``, evenly spread."""
    most = max(8, int((BUDGET / max(pieces, 1)) ** 0.5))
    if len(values) <= most:
        return values
    return values[np.linspace(0, len(values) - 1, most).round().astype(np.int64)]


def _overloaded(
    early: NDArray[np.int64],
    late: NDArray[np.int64],
    size: NDArray[np.int64],
    demand: NDArray[np.int64],
    cap: int,
    starts: NDArray[np.int64],
    ends: NDArray[np.int64],
) -> bool:
    """Whether some interval [a, b) (a in ``starts``, b in ``ends``, a < b) needs more than cap × (b − a)."""
    # chunks of interval starts keep the (chunk, ends, pieces) arrays within the budget
    chunk = max(1, BUDGET // max(1, len(ends) * len(size)))
    b = ends[None, :, None]
    for first in range(0, len(starts), chunk):
        a = starts[first : first + chunk, None, None]
        left = np.minimum(b, early + size) - np.maximum(a, early)
        right = np.minimum(b, late + size) - np.maximum(a, late)
        need = (np.clip(np.minimum(left, right), 0, None) * demand).sum(axis=2)
        room = cap * (b[:, :, 0] - a[:, :, 0])
        if ((need > room) & (room > 0)).any():
            return True
    return False


def destructive_bound(problem: IntegerProblem, lower: int, upper: int, seconds: float = MAX_SECONDS) -> int:
    """``lower`` raised by energetic reasoning: one more than the largest target found infeasible.

    Searched by bisection between ``lower`` and ``upper − 1`` (a feasible
    schedule's makespan), for at most ``seconds`` (and :data:`MAX_SECONDS`); every
    step that raises the bound is itself a proof, so stopping early loses nothing.
    """
    windows = Windows(problem)
    began = time.monotonic()
    budget = min(seconds, MAX_SECONDS)
    low, high = lower, upper - 1  # invariant: every target below low is infeasible; high is unknown
    while low <= high and time.monotonic() - began < budget:
        middle = (low + high) // 2
        if windows.infeasible(middle):
            low = middle + 1
        else:
            high = middle - 1
    return max(lower, low)
