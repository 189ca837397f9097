"""Vectorised scores of realised schedules: one workflow, many scenarios, numpy (Monte Carlo's path).

:class:`~peakopt.oracle.vector.batch.BatchScorer` scores many start vectors of *one* workflow; under
uncertainty every scenario has its own run times and demand multipliers, so the events move
with the row. :class:`RealisedScorer` is built once from the nominal workflow and scores a
``scenarios × tasks`` matrix of realised starts against the matching matrices of run times and
multipliers (:class:`~peakopt.oracle.uncertain.scenarios.Scenarios`), with the oracle's rules:

- a step runs over ``[start, start + length)``; a piecewise profile's segments keep their
  shares of the run (the realised workflow rounds their boundaries to the scenario grid, so a
  piecewise step's inner boundary may differ by half a grid step, 0.5 ms);
- a load is over capacity when it exceeds the capacity and what the steps over capacity on
  their own force (their unavoidable overload) by more than ``TOLERANCE · C``; a stretch of at
  most ``TOLERANCE`` times the schedule's time scale is float noise, as are two instants that
  close; a dependency ``a -> b`` is broken when ``b`` starts before ``a`` ends, beyond that.

A machine's soft resources (:attr:`~peakopt.models.Machine.soft`) do not decide ``safe``; a
safe row that overflows one avoidably gets its slowed makespan (:mod:`peakopt.oracle.judge.slowdown`,
here in floats), which its gap and efficiency are figured from.

Times and loads are float64 here: figures agree with :func:`~peakopt.oracle.evaluate` on the
realised workflow (:meth:`Scenarios.workflow <peakopt.oracle.uncertain.scenarios.Scenarios.workflow>`) to
float rounding, and verdicts except within a few ulps of the tolerance (a property test checks it).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from peakopt.models import Machine, Workflow
from peakopt.models.extras import LazyModule
from peakopt.oracle.base.exact import TOLERANCE
from peakopt.oracle.judge.slowdown import processor_sharing

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from peakopt.oracle.base.arrays import Bools, Floats, Ints
else:
    # NumPy on first use: a command's --help imports this module's names, and must not pay for NumPy
    np = LazyModule("numpy", "the oracle")


@dataclass(frozen=True)
class RealisedScores:
    """Per scenario (one entry per row): the oracle's figures of the realised schedule.

    Attributes
    ----------
    makespan, cva, avoidable_cva, slowed_makespan
        As :class:`~peakopt.oracle.judge.verdict.Score` defines them (``slowed_makespan`` is the
        makespan in an unsafe row, where it is not used).
    overflow, soft_overflow
        An avoidable overflow of a hard resource happened (any stretch over capacity); of a soft one.
    dependency_violations
        Dependencies broken by the realised starts.
    safe
        No dependency broken, no avoidable overflow of a hard resource, no negative start.
    """

    makespan: Floats
    cva: Floats
    avoidable_cva: Floats
    overflow: Bools
    dependency_violations: Ints
    safe: Bools
    slowed_makespan: Floats
    soft_overflow: Bools


class RealisedScorer:
    """Scores realised schedules of ``workflow`` on ``machine`` (built once, from nominal data).

    Parameters
    ----------
    workflow
        The nominal workflow (its tasks' segments and demands; lengths come per scenario).
    machine
        The capacities; resources it does not list are unconstrained.
    soft_as_hard
        Count the machine's soft resources as hard.
    """

    def __init__(self, workflow: Workflow, machine: Machine, *, soft_as_hard: bool = False) -> None:
        self.size = len(workflow.tasks)
        self.resources = tuple(machine.capacity)
        self.capacity = np.array([machine.capacity[r] for r in self.resources], dtype=float)
        soft = () if soft_as_hard else machine.soft
        self.soft = np.array([r in soft for r in self.resources], dtype=bool)
        kept = [r for r in self.resources if r in soft]
        self.segments = [
            [(s.duration, [s.demand.get(r, 0.0) for r in kept]) for s in t.segments] for t in workflow.tasks
        ]
        self.preds_of = workflow.predecessors
        columns, begins, ends, demands = [], [], [], []
        for column, task in enumerate(workflow.tasks):
            total, done = task.length, 0.0
            for k, segment in enumerate(task.segments):
                # a zero-length task's realised run is shared evenly among its segments
                share = (k / len(task.segments), (k + 1) / len(task.segments))
                if total > 0:
                    share = (done / total, (done + segment.duration) / total)
                done += segment.duration
                demand = [segment.demand.get(r, 0.0) for r in self.resources]
                if share[1] > share[0] and any(demand):
                    columns.append(column)
                    begins.append(share[0])
                    ends.append(share[1])
                    demands.append(demand)
        self.columns = np.array(columns + columns, dtype=np.intp)
        self.shares = np.array(begins + ends, dtype=float)
        demand_matrix = np.array(demands, dtype=float).reshape(len(demands), len(self.resources))
        self.demands = np.concatenate([demand_matrix, -demand_matrix])  # events × resources
        index = workflow.index
        self.preds = np.array([index[p] for p, _ in workflow.edges], dtype=np.intp)
        self.succs = np.array([index[s] for _, s in workflow.edges], dtype=np.intp)

    def score(self, starts: npt.ArrayLike, lengths: npt.ArrayLike, scales: npt.ArrayLike) -> RealisedScores:
        """Score every row: realised ``starts`` under realised ``lengths`` and demand ``scales``.

        All three are ``scenarios × tasks`` (tasks in workflow order).
        """
        start = np.asarray(starts, dtype=float).reshape(-1, self.size)
        length = np.asarray(lengths, dtype=float).reshape(start.shape)
        scale = np.asarray(scales, dtype=float).reshape(start.shape)
        ends = start + length
        makespan = ends.max(axis=1, initial=0.0)
        reach = np.maximum(np.abs(start), np.abs(ends)).max(axis=1, initial=0.0)
        # as the judge: a subnormal scale counts as the smallest normal float (see same_time)
        reach = np.where(reach > 0, np.maximum(reach, sys.float_info.min), 0.0)
        pred_end, begin = ends[:, self.preds], start[:, self.succs]
        broken = (begin < pred_end) & (pred_end - begin > TOLERANCE * reach[:, None])
        violations = broken.sum(axis=1).astype(np.int64)
        cva, avoidable, hot = self._sweep(start, length, scale, reach)
        overflow = np.asarray(hot[:, ~self.soft].any(axis=1), dtype=bool)
        valid = (violations == 0) & ~(start < 0).any(axis=1)
        safe = ~overflow & valid
        soft = np.asarray(hot[:, self.soft].any(axis=1), dtype=bool)
        slowed = makespan.copy()  # only a safe run's is used (gap, efficiency): the others stay
        for row in np.flatnonzero(safe & soft):  # rare: one by one
            slowed[row] = self._slowed(start[row], length[row], scale[row])
        return RealisedScores(makespan, cva, avoidable, overflow, violations, safe, slowed, soft)

    def _slowed(self, start: Floats, length: Floats, scale: Floats) -> float:
        """The slowed makespan of one realised row (:func:`~.slowdown.processor_sharing`, in floats)."""
        capacity = [float(c) for c in self.capacity[self.soft]]
        segments = []
        for task, parts in enumerate(self.segments):
            nominal = sum(d for d, _ in parts)
            # a realised run keeps its segments' shares (a zero-length one shares evenly)
            shares = [d / nominal if nominal > 0 else 1 / len(parts) for d, _ in parts]
            segments.append(
                [
                    (
                        share * float(length[task]),
                        [min(a * float(scale[task]), c) for a, c in zip(amounts, capacity, strict=True)],
                    )
                    for share, (_, amounts) in zip(shares, parts, strict=True)
                ]
            )
        ends = processor_sharing([float(x) for x in start], segments, self.preds_of, capacity, _overloaded)
        return max((e for e in ends if e is not None), default=0.0)

    def _sweep(
        self, start: Floats, length: Floats, scale: Floats, reach: Floats
    ) -> tuple[Floats, Floats, Bools]:
        """Per row: cva, avoidable cva, and per resource whether an avoidable overflow happened."""
        rows = len(start)
        if not len(self.columns) or not rows:
            return np.zeros(rows), np.zeros(rows), np.zeros((rows, len(self.resources)), dtype=bool)
        times = start[:, self.columns] + self.shares * length[:, self.columns]
        order = np.argsort(times, axis=1, kind="stable")
        times = np.take_along_axis(times, order, axis=1)
        # rows × events × resources: each event's demand change, scaled by its task's multiplier
        rise = self.demands[order] * np.take_along_axis(scale[:, self.columns], order, axis=1)[:, :, None]
        capacity = self.capacity
        # an over-capacity step forces its own overload wherever it runs: not avoidable
        own = np.sign(rise) * np.maximum(np.abs(rise) - capacity, 0.0)
        loads = np.cumsum(rise, axis=1)[:, :-1]
        forced = np.cumsum(own, axis=1)[:, :-1]
        widths = np.diff(times, axis=1)[:, :, None]
        real = widths > TOLERANCE * reach[:, None, None]
        over = np.maximum(loads - capacity, 0.0)
        extra = loads - capacity - forced
        hot = real & (extra > TOLERANCE * capacity)
        cva = (np.where(real, over, 0.0) * widths / capacity).sum(axis=(1, 2))
        avoidable = (np.where(hot, extra, 0.0) * widths / capacity).sum(axis=(1, 2))
        return cva, avoidable, hot.any(axis=1)


def _overloaded(load: float, capacity: float) -> bool:
    """A clamped load over capacity, as this module's sweep counts it (beyond ``TOLERANCE · C``)."""
    return load - capacity > TOLERANCE * capacity
