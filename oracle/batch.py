"""Vectorised scoring of many schedules of one workflow on one machine (numpy).

The same event sweep as :func:`peakopt.oracle.evaluate`, done for a whole
matrix of start times at once: per row, the segment start and end events are
sorted, their demand changes summed cumulatively, and the constant pieces
between consecutive events integrated. It returns the same numbers as the
exact path (a property test checks it) without violation messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from peakopt.models import Machine, Workflow
from peakopt.oracle.evaluate import TOLERANCE, cva_floor

Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]

#: Rows scored per numpy pass; bounds the temporaries (rows x events x resources).
CHUNK = 4096


@dataclass(frozen=True)
class BatchScores:
    """Metrics of many schedules, one entry per row of the start matrix.

    Attributes match :class:`~peakopt.oracle.score.Score`; ``peak`` and
    ``violation_area`` have one column per resource of ``resources`` (the
    machine's, in its order).
    """

    resources: tuple[str, ...]
    valid: Bools
    makespan: Floats
    cva: Floats
    cva_floor: Floats
    avoidable_cva: Floats
    safe: Bools
    mru: Floats
    strict_mru: Floats
    safe_mru: Floats
    dependency_violations: Ints
    peak: Floats
    peak_ratio: Floats
    violation_area: Floats


class BatchScorer:
    """Scores start matrices of ``workflow`` on ``machine``; built once, used for many batches.

    Parameters
    ----------
    workflow, machine
        The instance. Columns of a start matrix are the tasks in
        ``workflow.tasks`` order; NaN marks a missing start.
    """

    def __init__(self, workflow: Workflow, machine: Machine) -> None:
        self.workflow = workflow
        self.resources = tuple(machine.capacity)
        self.capacity = np.array([machine.capacity[r] for r in self.resources], dtype=float)
        self.lengths = np.array([t.length for t in workflow.tasks], dtype=float)
        self.floor = cva_floor(workflow, machine)
        columns, offsets, deltas = [], [], []
        for column, task in enumerate(workflow.tasks):
            offset = 0.0
            for segment in task.segments:
                demand = [segment.demand.get(r, 0.0) for r in self.resources]
                if segment.duration > 0 and any(demand):
                    columns += [column, column]
                    offsets += [offset, offset + segment.duration]
                    deltas += [demand, [-d for d in demand]]
                offset += segment.duration
        self.columns = np.array(columns, dtype=np.intp)
        self.offsets = np.array(offsets, dtype=float)
        self.deltas = np.array(deltas, dtype=float).reshape(len(columns), len(self.resources))
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

    def _sweep(self, starts: Floats, present: Bools | None) -> tuple[Floats, Floats, Floats]:
        """Per row and resource: violation area, ∫ min(1, u), peak load."""
        rows, resources = len(starts), len(self.resources)
        if not len(self.columns):
            zeros = np.zeros((rows, resources))
            return zeros, zeros.copy(), zeros.copy()
        times = starts[:, self.columns] + self.offsets
        order = np.argsort(times, axis=1)
        times = np.take_along_axis(times, order, axis=1)
        deltas = self.deltas[order]
        if present is not None:  # a missing task's events change nothing
            deltas *= np.take_along_axis(present[:, self.columns], order, axis=1)[:, :, None]
        loads = np.cumsum(deltas, axis=1)[:, :-1, :]
        lengths = np.diff(times, axis=1)[:, :, None]
        ratio = loads / self.capacity
        over = loads > self.capacity * (1 + TOLERANCE)
        area = np.where(over, (ratio - 1.0) * lengths, 0.0).sum(axis=1)
        used = (np.minimum(ratio, 1.0) * lengths).sum(axis=1)
        peak = np.where(lengths > 0, loads, 0.0).max(axis=1, initial=0.0)
        return area, used, peak

    def _chunk(self, starts: Floats) -> dict[str, Any]:
        missing = np.isnan(starts)
        present = ~missing if missing.any() else None
        clean = np.where(missing, 0.0, starts) if present is not None else starts
        area, used, peak = self._sweep(clean, present)
        ends = np.where(missing, -np.inf, clean + self.lengths)
        makespan = np.where(missing.all(axis=1), 0.0, ends.max(axis=1))
        origin = np.minimum(0.0, np.where(missing, 0.0, clean).min(axis=1, initial=0.0))
        span = makespan - origin
        slack = TOLERANCE * np.maximum(1.0, span)
        pred_end = clean[:, self.preds] + self.lengths[self.preds]
        broken = clean[:, self.succs] < pred_end - TOLERANCE * np.maximum(1.0, np.abs(pred_end))
        if present is not None:
            broken &= present[:, self.preds] & present[:, self.succs]
        violations = broken.sum(axis=1)
        valid = ~missing.any(axis=1) & ~(clean < 0).any(axis=1) & (violations == 0)
        cva = area.sum(axis=1)
        avoidable = np.maximum(0.0, cva - self.floor)
        resources = len(self.resources)
        with np.errstate(divide="ignore", invalid="ignore"):
            mru = np.where((span > 0) & (resources > 0), used.sum(axis=1) / max(resources, 1) / span, 0.0)
        safe = valid & (avoidable <= slack)
        return {
            "valid": valid,
            "makespan": makespan,
            "cva": cva,
            "cva_floor": np.full(len(starts), self.floor),
            "avoidable_cva": avoidable,
            "safe": safe,
            "mru": mru,
            "strict_mru": np.where(cva <= slack, mru, 0.0),
            "safe_mru": np.where(safe, mru, 0.0),
            "dependency_violations": violations.astype(np.int64),
            "peak": peak,
            "peak_ratio": peak / self.capacity,
            "violation_area": area,
        }


def score_batch(workflow: Workflow, machine: Machine, starts: npt.ArrayLike) -> BatchScores:
    """Score many schedules of one workflow on one machine at once.

    Parameters
    ----------
    workflow, machine
        The instance.
    starts
        2-D array: one row per schedule, one column per task in
        ``workflow.tasks`` order; NaN marks a missing start.

    Returns
    -------
    BatchScores
        The metrics of :func:`~peakopt.oracle.evaluate`, as arrays.
    """
    return BatchScorer(workflow, machine).score(starts)
