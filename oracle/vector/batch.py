"""Vectorised scoring of many schedules of one workflow on one machine (numpy, the fast path).

The metrics of :mod:`peakopt.oracle.judge.metrics` by the same event sweep, done for a whole
matrix of start times at once: per row, the segment start and end events are
sorted, their demand changes summed cumulatively, and the constant pieces
between consecutive events integrated. The rules are the exact path's — a
stretch shorter than :data:`~peakopt.oracle.base.exact.TOLERANCE` times the
schedule's time scale is noise (only each step's own overload counts there,
it sets no peak), a load counts as over capacity when it exceeds what the
steps force on their own by more than ``TOLERANCE · C`` — but times are
float64, so this path agrees with ``evaluate`` to float rounding:

- demands go on their exact decimal grid when it fits in 2**53 (any data with
  a few decimals), so loads are exact sums and ``safe`` (an avoidable cva of
  exactly 0) and ``strict_mru`` (a cva of exactly 0) are the exact path's
  verdicts; otherwise an avoidable load must exceed ``TOLERANCE · C`` to count;
- times and the figures built on them (makespan, cva, MRU) carry float64
  rounding: within 1e-9 relative of ``evaluate``'s (a property test checks it),
  and a verdict may differ only where two instants are within a few ulps of
  the tolerance's edge.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from peakopt.models import Machine, Workflow
from peakopt.oracle.base.arrays import Bools, Floats, Ints
from peakopt.oracle.base.exact import TOLERANCE, on_grid, over, to_float
from peakopt.oracle.judge.metrics import cva_floor, measure, task_floor
from peakopt.oracle.judge.slowdown import slowed_makespan

#: Rows scored per numpy pass; bounds the temporaries (rows x events x resources).
CHUNK = 4096
#: Integers up to this are exact in float64, and so are their sums below it.
EXACT_FLOAT = 2**53


@dataclass(frozen=True)
class BatchScores:
    """Metrics of many schedules, one entry per row of the start matrix.

    Attributes match :class:`~peakopt.oracle.judge.verdict.Score`; ``peak`` and
    ``violation_area`` have one column per resource of ``resources`` (the
    machine's, in its order). An undefined MRU (span 0) is NaN here.
    ``slowed_makespan`` is the exact path's (:mod:`peakopt.oracle.judge.slowdown`), computed exactly
    for the safe rows with avoidable soft overflow (the makespan of the other safe rows), and
    NaN for the unsafe ones, where ``evaluate`` has it too: the gaps and efficiencies figured
    from it are a safe row's only, and an unsafe row with soft overflow would cost an exact
    simulation each (about 3 ms for 15 steps, against 20 µs a row for the batch).
    """

    resources: tuple[str, ...]
    valid: Bools
    makespan: Floats
    cva: Floats
    cva_floor: Floats
    avoidable_cva: Floats
    avoidable_cva_soft: Floats
    safe: Bools
    mru: Floats
    strict_mru: Floats
    safe_mru: Floats
    dependency_violations: Ints
    peak: Floats
    peak_ratio: Floats
    violation_area: Floats
    slowed_makespan: Floats


@dataclass(frozen=True)
class _Units:
    """A resource's demands as the sweep adds them: exact integers on their decimal grid if they fit."""

    capacity: float
    deltas: list[float]  # per segment, its demand
    own: list[float]  # per segment, its overload on its own (0 unless over capacity)
    scale: float  # real amount per unit
    slack: float  # loads up to this above what the steps force alone are at capacity


def _units(capacity: float, amounts: list[float]) -> _Units:
    exponent, ints = on_grid([capacity, *amounts])
    cap, rest = ints[0], ints[1:]
    if cap + sum(rest) < EXACT_FLOAT:
        own = [float(a - cap) if over(a, cap) else 0.0 for a in rest]
        return _Units(float(cap), [float(a) for a in rest], own, to_float(1, exponent), TOLERANCE * cap)
    own = [to_float(a - cap, exponent) if over(a, cap) else 0.0 for a in rest]
    return _Units(capacity, amounts, own, 1.0, TOLERANCE * capacity)


class BatchScorer:
    """Scores start matrices of ``workflow`` on ``machine``; built once, used for many batches.

    Parameters
    ----------
    workflow, machine
        The instance. Columns of a start matrix are the tasks in
        ``workflow.tasks`` order; NaN marks a missing start.
    soft_as_hard
        Count the machine's soft resources as hard (as :func:`~peakopt.oracle.evaluate`).
    """

    def __init__(self, workflow: Workflow, machine: Machine, *, soft_as_hard: bool = False) -> None:
        self.workflow = workflow
        self.machine = machine.as_hard() if soft_as_hard else machine
        self.resources = tuple(machine.capacity)
        self.soft = np.array([r in self.machine.soft for r in self.resources], dtype=bool)
        self.floor = cva_floor(measure(workflow, machine))
        exponent, durations = on_grid([s.duration for t in workflow.tasks for s in t.segments])
        columns, begins, ends, segments = [], [], [], []
        position = 0
        lengths = []
        for column, task in enumerate(workflow.tasks):
            offset = 0
            for segment in task.segments:
                size = durations[position]
                if size > 0 and any(segment.demand.get(r, 0.0) > 0 for r in self.resources):
                    columns.append(column)
                    begins.append(to_float(offset, exponent))
                    ends.append(to_float(offset + size, exponent))
                    segments.append(segment.demand)
                offset, position = offset + size, position + 1
            lengths.append(to_float(offset, exponent))
        self.lengths = np.array(lengths, dtype=float)
        units = [_units(machine.capacity[r], [d.get(r, 0.0) for d in segments]) for r in self.resources]
        self.capacity = np.array([u.capacity for u in units], dtype=float)
        self.scale = np.array([u.scale for u in units], dtype=float)
        self.slack = np.array([u.slack for u in units], dtype=float)
        # each step's own overload is exact and independent of where it runs: it is added per row,
        # so a segment shorter than the float resolution at its start still counts
        floors = [task_floor(workflow, r, machine.capacity[r]) for r in self.resources]
        self.floors = np.array([[f.get(t.id, 0.0) for f in floors] for t in workflow.tasks], dtype=float)
        self.floors = self.floors.reshape(len(workflow.tasks), len(self.resources))
        self.overloaded = np.array([any(t.id in f for f in floors) for t in workflow.tasks], dtype=float)
        self.columns = np.array(columns + columns, dtype=np.intp)
        self.offsets = np.array(begins + ends, dtype=float)
        # per segment, its demand changes and, for the resources some step exceeds on its own, its
        # own overload, side by side: one cumulative sum for both
        self.overflowing = np.array([m for m, u in enumerate(units) if any(u.own)], dtype=np.intp)
        rise = np.array(
            [
                [u.deltas[k] for u in units] + [units[m].own[k] for m in self.overflowing]
                for k in range(len(segments))
            ],
            dtype=float,
        ).reshape(len(segments), len(units) + len(self.overflowing))
        self.deltas = np.concatenate([rise, -rise]).T.copy()  # channels × events
        index = workflow.index
        self.preds = np.array([index[p] for p, _ in workflow.edges], dtype=np.intp)
        self.succs = np.array([index[s] for _, s in workflow.edges], dtype=np.intp)

    def matrix(self, schedules: Iterable[Mapping[str, float]]) -> Floats:
        """Start matrix of schedules given as id -> start maps (NaN where a task has no start)."""
        ids = [t.id for t in self.workflow.tasks]
        rows = [[s.get(i, np.nan) for i in ids] for s in schedules]
        return np.array(rows, dtype=float).reshape(-1, len(ids))

    def score(self, starts: npt.ArrayLike) -> BatchScores:
        """Score every row of ``starts`` (rows = schedules, columns = tasks in workflow order)."""
        matrix = np.asarray(starts, dtype=float)
        if matrix.ndim != 2 or matrix.shape[1] != len(self.lengths):
            raise ValueError(f"starts must have shape (schedules, {len(self.lengths)}), got {matrix.shape}")
        parts = [self._chunk(matrix[i : i + CHUNK]) for i in range(0, max(len(matrix), 1), CHUNK)]
        return BatchScores(self.resources, **{k: np.concatenate([p[k] for p in parts]) for k in parts[0]})

    def _sweep(
        self, starts: Floats, present: Bools | None, span: Floats, scale: Floats
    ) -> tuple[Floats, ...]:
        """Per row and resource: avoidable area, whether there is any, ∫ min(1, u) / span, peak (units).

        Verdicts come from the pieces, not from the areas, which may underflow
        on the shortest durations.
        """
        rows, resources = len(starts), len(self.resources)
        if not len(self.columns):
            zeros = np.zeros((rows, resources))
            return zeros, zeros.astype(bool), zeros.copy(), zeros.copy()
        times = starts[:, self.columns] + self.offsets
        order = np.argsort(times, axis=1)
        times = np.take_along_axis(times, order, axis=1)
        # channels first, events last: numpy reduces and accumulates fastest along the last axis
        deltas = self.deltas[:, order]
        if present is not None:  # a missing task's events change nothing
            deltas *= np.take_along_axis(present[:, self.columns], order, axis=1)
        sums = np.cumsum(deltas[:, :, :-1], axis=2)  # (the last event ends the last piece) contiguous
        loads = sums[:resources]
        capacity = self.capacity[:, None, None]
        extra = loads - capacity
        if len(self.overflowing):  # what the steps force on their own is no avoidable overload
            extra[self.overflowing] -= sums[resources:]
        widths = np.diff(times, axis=1)
        noise = widths <= TOLERANCE * scale[:, None]
        hot = ~noise & (extra > self.slack[:, None, None])
        avoidable = np.einsum("cre,re->cr", np.where(hot, extra, 0.0), widths) / self.capacity[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):  # a span of 0: MRU undefined (NaN)
            share = widths / span[:, None]
            used = np.einsum("cre,re->cr", np.minimum(loads, capacity), share) / self.capacity[:, None]
        peak = np.where(noise, 0.0, loads).max(axis=2, initial=0.0)
        return avoidable.T, hot.any(axis=2).T, used.T, peak.T

    def _chunk(self, starts: Floats) -> dict[str, Any]:
        missing = np.isnan(starts)
        present = ~missing if missing.any() else None
        clean = np.where(missing, 0.0, starts) if present is not None else starts
        ends = np.where(missing, -np.inf, clean + self.lengths)
        makespan = np.where(missing.all(axis=1), 0.0, ends.max(axis=1))
        origin = np.minimum(0.0, np.where(missing, 0.0, clean).min(axis=1, initial=0.0))
        span = makespan - origin
        # the schedule's time scale, its largest |time|: the tolerance is relative to it
        reach = np.maximum(np.abs(clean), np.abs(clean + self.lengths))
        scale = np.where(missing, 0.0, reach).max(axis=1, initial=0.0)
        # as the judge: a subnormal scale counts as the smallest normal float (see same_time)
        scale = np.where(scale > 0, np.maximum(scale, sys.float_info.min), 0.0)
        avoidable_area, hot, used, peak = self._sweep(clean, present, span, scale)
        kept = np.ones_like(starts) if present is None else present.astype(float)
        area = kept @ self.floors + avoidable_area
        overloaded = hot.any(axis=1) | (kept @ self.overloaded > 0)
        pred_end = clean[:, self.preds] + self.lengths[self.preds]
        begin = clean[:, self.succs]
        same = np.abs(pred_end - begin) <= TOLERANCE * scale[:, None]
        broken = (begin < pred_end) & ~same
        if present is not None:
            broken &= present[:, self.preds] & present[:, self.succs]
        violations = broken.sum(axis=1)
        valid = ~missing.any(axis=1) & ~(clean < 0).any(axis=1) & (violations == 0)
        mru = (
            np.where(span > 0, used.mean(axis=1), np.nan)
            if len(self.resources)
            else np.full(len(starts), np.nan)
        )
        safe = valid & ~hot[:, ~self.soft].any(axis=1)
        slowed = np.where(safe, makespan, np.nan)
        for row in np.flatnonzero(safe & hot[:, self.soft].any(axis=1)):  # rare: exact, one by one
            given = {t.id: float(x) for t, x in zip(self.workflow.tasks, clean[row], strict=True)}
            slowed[row] = slowed_makespan(self.workflow, measure(self.workflow, self.machine, given))
        soft_area = avoidable_area[:, self.soft].sum(axis=1)
        return {
            "valid": valid,
            "makespan": makespan,
            "cva": area.sum(axis=1),
            "cva_floor": np.full(len(starts), self.floor),
            "avoidable_cva": avoidable_area.sum(axis=1),
            "avoidable_cva_soft": soft_area,
            "safe": safe,
            "mru": mru,
            "strict_mru": np.where(overloaded, 0.0, mru),
            "safe_mru": np.where(safe, mru, 0.0),
            "dependency_violations": violations.astype(np.int64),
            "peak": peak * self.scale,
            "peak_ratio": peak / self.capacity,
            "violation_area": area,
            "slowed_makespan": slowed,
        }


def score_batch(
    workflow: Workflow, machine: Machine, starts: npt.ArrayLike, *, soft_as_hard: bool = False
) -> BatchScores:
    """Score many schedules of one workflow on one machine at once.

    Parameters
    ----------
    workflow, machine
        The instance.
    starts
        2-D array: one row per schedule, one column per task in
        ``workflow.tasks`` order; NaN marks a missing start.
    soft_as_hard
        Count the machine's soft resources as hard.

    Returns
    -------
    BatchScores
        The metrics of :func:`~peakopt.oracle.evaluate`, as arrays (an
        undefined MRU is NaN), to the float tolerance of the module docstring.
    """
    return BatchScorer(workflow, machine, soft_as_hard=soft_as_hard).score(starts)
