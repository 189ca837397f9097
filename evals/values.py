"""The per-sample figures the Inspect scorers report, read off the oracle's rows.

Inspect's metrics (mean, stderr) see one number per sample and key, and leave
a NaN out (a sample "unscored" for that key). The numbers are chosen so that
each key's mean is the aggregate ``peakopt score`` prints over the same rows
(:mod:`peakopt.oracle.aggregate`):

- ``valid`` and ``safe`` are 1 or 0 (their means are the valid and safe rates);
- ``makespan``, ``cva`` and ``avoidable_cva`` are NaN for an invalid answer
  (an invalid schedule's makespan is not that of a schedule of the workflow);
- ``strict_mru`` is 0 for an invalid answer and ``safe_mru`` 0 for an unsafe
  one; an MRU that is undefined (makespan 0) is NaN;
- ``gap`` is NaN for an unsafe answer and where no proven optimum is known;
- ``efficiency`` (the row's, :func:`peakopt.oracle.metrics.efficiency`) is 0 for an
  invalid or unsafe answer, NaN without a proven optimum.

For planning rows every metric is NaN when the answer could not be read, and
``valid`` is 0.
"""

from __future__ import annotations

import math

from peakopt.oracle.rows import PlanRow, ScoreRow

#: The scheduling task's score keys, headline first.
SCHEDULE_KEYS = (
    "efficiency",
    "valid",
    "safe",
    "makespan",
    "cva",
    "avoidable_cva",
    "strict_mru",
    "safe_mru",
    "gap",
)

#: The planning task's score keys (fields of :class:`~peakopt.oracle.rows.PlanRow`).
PLAN_KEYS = (
    "valid",
    "edge_f1",
    "closure_f1",
    "reduction_f1",
    "ged",
    "ged_normalised",
    "concurrency_f1",
    "exact_match",
)


def _number(value: float | bool | None) -> float:
    return math.nan if value is None else float(value)


def schedule_values(row: ScoreRow) -> dict[str, float]:
    """The scheduling figures of one scored answer (see the module doc)."""
    valid, safe = row.valid, row.safe
    return {
        "efficiency": _number(row.efficiency),
        "valid": float(valid),
        "safe": float(safe),
        "makespan": _number(row.makespan) if valid else math.nan,
        "cva": _number(row.cva) if valid else math.nan,
        "avoidable_cva": _number(row.avoidable_cva) if valid else math.nan,
        "strict_mru": _number(row.strict_mru) if valid else 0.0,
        "safe_mru": _number(row.safe_mru) if safe else 0.0,
        "gap": _number(row.gap) if safe else math.nan,
    }


def plan_values(row: PlanRow) -> dict[str, float]:
    """The planning figures of one scored prediction (see the module doc)."""
    found = {key: _number(getattr(row, key)) for key in PLAN_KEYS if key != "valid"}
    return {"valid": float(row.valid), **found}
