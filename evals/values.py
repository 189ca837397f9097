"""The per-sample figures the Inspect scorers report, read off the oracle's rows.

Inspect's metrics (mean, stderr) see one number per sample and key, and leave
a NaN out (a sample "unscored" for that key). The numbers are each row's values
in the aggregates' means (:func:`peakopt.oracle.tables.aggregate.row_values`, None as
NaN), so each key's mean is the aggregate ``peakopt score`` prints over the
same rows:

- ``valid`` and ``safe`` are 1 or 0 (their means are the valid and safe rates);
- ``makespan``, ``cva`` and ``avoidable_cva`` are NaN for an invalid answer
  (an invalid schedule's makespan is not that of a schedule of the workflow);
- ``strict_mru`` is 0 for an invalid answer and ``safe_mru`` 0 for an unsafe
  one; an MRU that is undefined (makespan 0) is NaN;
- ``gap`` is NaN for an unsafe answer and where no proven optimum is known;
- ``efficiency`` (the row's, :func:`peakopt.oracle.judge.metrics.efficiency`) is 0 for an
  invalid or unsafe answer, NaN without a proven optimum.

For planning rows every metric is NaN when the answer could not be read, and
``valid`` is 0.
"""

from __future__ import annotations

import math

from peakopt.oracle.tables.aggregate import row_values
from peakopt.oracle.tables.rows import PlanRow, ScoreRow

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

#: The planning task's score keys (fields of :class:`~peakopt.oracle.tables.rows.PlanRow`).
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


#: Each scheduling key but ``valid``: the mean of the aggregates it equals.
_MEAN_OF = {
    "efficiency": "efficiency",
    "safe": "safe_rate",
    "makespan": "mean_makespan",
    "cva": "mean_cva",
    "avoidable_cva": "mean_avoidable_cva",
    "strict_mru": "strict_mru",
    "safe_mru": "safe_mru",
    "gap": "gap",
}


def schedule_values(row: ScoreRow) -> dict[str, float]:
    """The scheduling figures of one scored answer: the row's values in the aggregates' means."""
    counted = row_values(row)
    found = {key: _number(counted[mean]) for key, mean in _MEAN_OF.items()}
    return {key: float(row.valid) if key == "valid" else found[key] for key in SCHEDULE_KEYS}


def plan_values(row: PlanRow) -> dict[str, float]:
    """The planning figures of one scored prediction (see the module doc)."""
    found = {key: _number(getattr(row, key)) for key in PLAN_KEYS if key != "valid"}
    return {"valid": float(row.valid), **found}
