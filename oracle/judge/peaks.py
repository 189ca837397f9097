"""Each step's clamped peak demand per resource, exactly: what a partial-order schedule must reserve.

A partial-order schedule (POS) is safe for every realisation of the durations only if each step
is charged, for its whole run, the highest demand it reaches (its *peak*): stretch its other
phases and shrink everyone else's, and any two unordered steps can meet at their peaks. The
peak counts the segments of positive length only: a zero-length segment (or a step of zero
length) holds nothing at any instant, and a relative change of a zero length leaves it zero.

A peak over the capacity is clamped to the capacity, as the solver does: such a step then
shares that resource with no step that uses it at all, so it runs alone there and causes only
the overload no schedule avoids (the cva floor).

Amounts are integers on each resource's exact decimal grid
(:func:`peakopt.oracle.judge.sweep.demand_grid`), scaled so that plain integer comparisons say what
the oracle's tolerant :func:`peakopt.oracle.base.exact.over` says: a load ``L`` fits capacity ``C``
when ``L · 10**12 <= C · (10**12 + 1)``. :attr:`Peaks.room` is the right-hand side and
:attr:`Peaks.weight` holds the ``L · 10**12`` terms.
"""

from __future__ import annotations

from dataclasses import dataclass

from peakopt.models import Machine, Workflow
from peakopt.oracle.base.exact import TOLERANCE_DIGITS, over, to_float
from peakopt.oracle.judge.sweep import demand_grid

_SCALE = 10**TOLERANCE_DIGITS


@dataclass(frozen=True)
class Peaks:
    """One resource's clamped peaks on an exact integer grid (see the module docstring).

    Attributes
    ----------
    resource
        Its name.
    capacity
        The machine's capacity, in the resource's real units (for messages).
    exponent
        The grid: ``weight[i] / 10**12 · 10**exponent`` is step ``i``'s clamped peak.
    room
        The largest load that fits, in the same integers as ``weight``.
    weight
        Per step in workflow order, its clamped peak (0 when it never holds the resource).
    """

    resource: str
    capacity: float
    exponent: int
    room: int
    weight: tuple[int, ...]

    def fits(self, load: int) -> bool:
        """Whether a load (a sum of weights) fits the capacity, as the oracle judges it."""
        return load <= self.room

    def amount(self, load: int) -> float:
        """A load of these integers in the resource's real units."""
        return to_float(load, self.exponent, _SCALE)


def clamped_peaks(workflow: Workflow, machine: Machine) -> list[Peaks]:
    """The clamped peaks of every step on every resource the machine limits, in its order."""
    found = []
    for resource, capacity in machine.capacity.items():
        grid = demand_grid(workflow, resource, capacity)
        weights = []
        for task, amounts in zip(workflow.tasks, grid.demand, strict=True):
            held = [a for s, a in zip(task.segments, amounts, strict=True) if s.duration > 0]
            peak = max(held, default=0)
            weights.append((grid.capacity if over(peak, grid.capacity) else peak) * _SCALE)
        room = grid.capacity * (_SCALE + 1)
        found.append(Peaks(resource, capacity, grid.exponent, room, tuple(weights)))
    return found
