"""Per-group aggregates of score rows, and the planning/scheduling correlation.

How invalid records count (a choice PeakBench leaves open):

- they are counted (``invalid``, with a tally of their reason kinds) and
  never dropped;
- they count as unsafe in ``safe_rate`` and as 0 in both MRU means (so do
  unsafe records in the safe-MRU mean); a record whose MRU is undefined
  (makespan 0) is left out of the mean it would enter, which is None when
  no record defines it;
- means of makespan, cva and avoidable cva are over valid records only (an
  invalid schedule's makespan is not that of a schedule of the workflow);
- gap statistics are over safe records that have the figure: the optimum is
  the best *safe* schedule, which an unsafe one may beat.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from peakopt.oracle.rows import PlanRow, ScoreRow

R = TypeVar("R", ScoreRow, PlanRow)
GROUP_KEYS = ("source", "setting", "machine", "tier", "workflow")
PLAN_GROUP_KEYS = ("source", "setting", "tier", "workflow")


class Stats(BaseModel):
    """Mean, median, 95th percentile (numpy's linear interpolation) and maximum of some values."""

    model_config = ConfigDict(frozen=True)

    count: int
    mean: float
    median: float
    p95: float
    max: float

    @classmethod
    def of(cls, values: Iterable[float | None]) -> Stats | None:
        """Statistics of the values that are not None; None when there are none."""
        array = np.array([v for v in values if v is not None], dtype=float)
        if not array.size:
            return None
        return cls(
            count=int(array.size),
            mean=float(array.mean()),
            median=float(np.median(array)),
            p95=float(np.percentile(array, 95)),
            max=float(array.max()),
        )


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the values that are not None; None when there are none."""
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


def group_rows(rows: Iterable[R], by: Sequence[str]) -> dict[tuple[str | None, ...], list[R]]:
    """Rows by the values of the fields ``by``, groups in order of first appearance."""
    groups: dict[tuple[str | None, ...], list[R]] = defaultdict(list)
    for row in rows:
        groups[tuple(getattr(row, key) for key in by)].append(row)
    return dict(groups)


def _reasons(rows: Iterable[ScoreRow | PlanRow]) -> dict[str, int]:
    return dict(Counter(kind for row in rows if not row.valid for kind in row.reason_kinds).most_common())


class ScoreSummary(BaseModel):
    """Aggregates of one group of :class:`ScoreRow` (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    group: dict[str, str | None]
    records: int
    invalid: int
    invalid_reasons: dict[str, int]
    safe_rate: float
    mean_makespan: float | None
    mean_cva: float | None
    mean_avoidable_cva: float | None
    strict_mru: float | None
    safe_mru: float | None
    gap: Stats | None
    gap_vs_lb: Stats | None
    gap_vs_ub: Stats | None
    pushed: int
    filled: int


def _mru_mean(count: int, earned: list[float | None]) -> float | None:
    """Mean over ``count`` records of an MRU that only ``earned`` ones score (the rest count 0).

    An earned MRU that is None (undefined: makespan 0) leaves its record out.
    """
    defined = [m for m in earned if m is not None]
    records = count - (len(earned) - len(defined))
    return sum(defined) / records if records else None


def summarise(rows: Sequence[ScoreRow], group: dict[str, str | None] | None = None) -> ScoreSummary:
    """Aggregates of ``rows`` as one group."""
    valid = [r for r in rows if r.valid]
    safe = [r for r in valid if r.safe]
    count = len(rows)
    return ScoreSummary(
        group=group or {},
        records=count,
        invalid=count - len(valid),
        invalid_reasons=_reasons(rows),
        safe_rate=len(safe) / count if count else 0.0,
        mean_makespan=mean(r.makespan for r in valid),
        mean_cva=mean(r.cva for r in valid),
        mean_avoidable_cva=mean(r.avoidable_cva for r in valid),
        strict_mru=_mru_mean(count, [r.strict_mru for r in valid]),
        safe_mru=_mru_mean(count, [r.safe_mru for r in safe]),
        gap=Stats.of(r.gap for r in safe),
        gap_vs_lb=Stats.of(r.gap_vs_lb for r in safe),
        gap_vs_ub=Stats.of(r.gap_vs_ub for r in safe),
        pushed=sum(r.pushed for r in rows),
        filled=sum(r.filled for r in rows),
    )


def _aggregate(
    rows: Sequence[R], by: Sequence[str], summary: Callable[[list[R], dict[str, str | None]], Any]
) -> list[Any]:
    known = GROUP_KEYS if isinstance(rows[0] if rows else None, ScoreRow) else PLAN_GROUP_KEYS
    unknown = [key for key in by if key not in known]
    if unknown and rows:
        raise ValueError(f"cannot group by {', '.join(unknown)}; choose from {', '.join(known)}")
    groups = group_rows(rows, by)
    return [summary(members, dict(zip(by, key, strict=True))) for key, members in groups.items()]


def aggregate(rows: Sequence[ScoreRow], by: Sequence[str] = ("source",)) -> list[ScoreSummary]:
    """Aggregates per group of rows sharing the values of ``by`` (fields of :data:`GROUP_KEYS`).

    Parameters
    ----------
    rows
        Score rows, e.g. from :func:`~peakopt.oracle.scoring.score_record`.
    by
        Grouping fields; empty for one group of all rows.

    Returns
    -------
    list of ScoreSummary
        One per group, in order of first appearance.
    """
    return _aggregate(rows, by, summarise)


class PlanSummary(BaseModel):
    """Aggregates of one group of :class:`PlanRow`: means over the valid predictions."""

    model_config = ConfigDict(frozen=True)

    group: dict[str, str | None]
    records: int
    invalid: int
    invalid_reasons: dict[str, int]
    edge_f1: float | None
    closure_f1: float | None
    reduction_f1: float | None
    concurrency_f1: float | None
    ged_normalised: float | None
    exact_match_rate: float | None
    cyclic: int
    hallucinating: int


def summarise_plans(rows: Sequence[PlanRow], group: dict[str, str | None] | None = None) -> PlanSummary:
    """Aggregates of planning rows as one group (invalid ones are counted, not averaged)."""
    valid = [r for r in rows if r.valid]
    return PlanSummary(
        group=group or {},
        records=len(rows),
        invalid=len(rows) - len(valid),
        invalid_reasons=_reasons(rows),
        edge_f1=mean(r.edge_f1 for r in valid),
        closure_f1=mean(r.closure_f1 for r in valid),
        reduction_f1=mean(r.reduction_f1 for r in valid),
        concurrency_f1=mean(r.concurrency_f1 for r in valid),
        ged_normalised=mean(r.ged_normalised for r in valid),
        exact_match_rate=mean(float(bool(r.exact_match)) for r in valid),
        cyclic=sum(bool(r.cyclic) for r in valid),
        hallucinating=sum(bool(r.hallucinated) for r in valid),
    )


def aggregate_plans(rows: Sequence[PlanRow], by: Sequence[str] = ("source",)) -> list[PlanSummary]:
    """Planning aggregates per group (fields of :data:`PLAN_GROUP_KEYS`), as :func:`aggregate`."""
    return _aggregate(rows, by, summarise_plans)


def ranks(values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Ranks from 1, ties sharing their average rank (as Spearman's coefficient needs)."""
    array = np.asarray(values, dtype=float)
    _, inverse, counts = np.unique(array, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    average = ends - (counts - 1) / 2.0
    return np.asarray(average[inverse], dtype=float)


def pearson(x: npt.ArrayLike, y: npt.ArrayLike) -> float | None:
    """Pearson's correlation; None with fewer than 2 points or a constant variable."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.size < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    a, b = a - a.mean(), b - b.mean()
    norm = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / norm) if norm > 0 else None


def spearman(x: npt.ArrayLike, y: npt.ArrayLike) -> float | None:
    """Spearman's rank correlation (Pearson's on average ranks); None when undefined."""
    return pearson(ranks(x), ranks(y))


class Correlation(BaseModel):
    """Correlation between a planning metric and a scheduling metric over paired records."""

    model_config = ConfigDict(frozen=True)

    group: dict[str, str | None]
    x: str
    y: str
    pairs: int
    pearson: float | None
    spearman: float | None


def pair_rows(plans: Iterable[PlanRow], scores: Iterable[ScoreRow]) -> list[tuple[PlanRow, ScoreRow]]:
    """Valid planning and scheduling rows about the same record.

    Rows match on (workflow, source, id). When several rows share that key
    (repeated samples without ids), the k-th prediction pairs with the k-th
    schedule of each machine, in file order.
    """
    by_key: dict[tuple[str | None, ...], list[PlanRow]] = defaultdict(list)
    for plan in plans:
        if plan.valid:
            by_key[(plan.workflow, plan.source, plan.id)].append(plan)
    seen: Counter[tuple[str | None, ...]] = Counter()
    pairs = []
    for score in scores:
        key = (score.workflow, score.source, score.id)
        occurrence = seen[(*key, score.machine)]
        seen[(*key, score.machine)] += 1
        candidates = by_key.get(key, [])
        if score.valid and occurrence < len(candidates):
            pairs.append((candidates[occurrence], score))
    return pairs


def correlate(
    plans: Sequence[PlanRow],
    scores: Sequence[ScoreRow],
    by: Sequence[str] = ("source",),
    x: str = "edge_f1",
    y: str = "cva",
) -> list[Correlation]:
    """Pearson and Spearman correlation of planning metric ``x`` and scheduling metric ``y`` per group.

    PeakBench's headline question: do models that get the dependency
    structure right also schedule within capacity? ``by`` names fields of
    the planning rows.
    """
    groups: dict[tuple[str | None, ...], list[tuple[float, float]]] = defaultdict(list)
    for plan, score in pair_rows(plans, scores):
        a, b = getattr(plan, x), getattr(score, y)
        if a is not None and b is not None:
            groups[tuple(getattr(plan, key) for key in by)].append((float(a), float(b)))
    found = []
    for key, points in groups.items():
        xs, ys = zip(*points, strict=True)
        found.append(
            Correlation(
                group=dict(zip(by, key, strict=True)),
                x=x,
                y=y,
                pairs=len(points),
                pearson=pearson(xs, ys),
                spearman=spearman(xs, ys),
            )
        )
    return found
