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
  the best *safe* schedule, which an unsafe one may beat;
- efficiency, the headline, is over every record with a proven optimum to
  compare with, an invalid or unsafe one counting 0 (see
  :func:`peakopt.oracle.judge.metrics.efficiency`).

Each mean can carry its seeded 95 % bootstrap interval (``intervals=True``),
computed on the same per-record values as the mean (:func:`samples`), averaged per question
first (:mod:`peakopt.oracle.tables.pairs`): repeated answers to one workflow × machine pair (Inspect's
epochs) are one value of the resampling, as on the leaderboard, not independent ones. With one
answer per pair (or the same number for every pair) the mean is the mean of those values.

Monte Carlo figures (rows scored with ``--samples``) are averaged the same way, one value per
record (each record's own mean over its scenarios, every record with the same number of
scenarios): a group's Monte Carlo safe rate is the share of safe runs over all its records'
scenarios, and its interval is the bootstrap over records, as for every other mean (the
records, not the scenarios, are the independent units). A record that gave no plan counts 0 in
the safe rate and is left out of the other means.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from peakopt.models.extras import LazyModule
from peakopt.oracle.tables.intervals import Interval, mean_interval
from peakopt.oracle.tables.names import GROUP_KEYS, PLAN_GROUP_KEYS
from peakopt.oracle.tables.pairs import SAMPLED_KEYS, group_value, means_by, question_keys, questions
from peakopt.oracle.tables.rows import MonteCarloMeans, PlanRow, ScoreRow, drop_absent

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    # NumPy on first use: a command's --help imports this module's names, and must not pay for NumPy
    np = LazyModule("numpy", "the oracle")

R = TypeVar("R", ScoreRow, PlanRow)


class Stats(BaseModel):
    """Mean, median, 95th percentile (numpy's linear interpolation) and maximum of some values."""

    model_config = ConfigDict(frozen=True, defer_build=True)

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


def check_group_keys(rows: Sequence[ScoreRow] | Sequence[PlanRow], by: Sequence[str]) -> None:
    """Refuse a grouping key that is neither a row field nor a label of any row (a typo).

    Raises
    ------
    ValueError
        Naming the unknown keys and what could be grouped by.
    """
    if not rows:
        return
    fields = scalar_fields(type(rows[0]))
    if isinstance(rows[0], ScoreRow):
        fields += list(SAMPLED_KEYS)  # the settings of the rows' samples (None without)
    found = {label for row in rows for label in row.labels}
    unknown = [key for key in by if key not in fields and key not in found]
    if unknown:
        usual = GROUP_KEYS if isinstance(rows[0], ScoreRow) else PLAN_GROUP_KEYS
        choices = ", ".join(dict.fromkeys([*usual, *sorted(found), *fields]))
        raise ValueError(f"unknown field {', '.join(unknown)} (no row has it); choose from {choices}")


def scalar_fields(model: type[ScoreRow] | type[PlanRow]) -> list[str]:
    """The fields of a row model that hold one value (those a table can be grouped by)."""
    return [name for name, info in model.model_fields.items() if not _collection(info.annotation)]


def _collection(annotation: Any) -> bool:
    return any(
        get_origin(arm) in (dict, list) or arm in (dict, list) for arm in (*get_args(annotation), annotation)
    )


def group_rows(rows: Iterable[R], by: Sequence[str]) -> dict[tuple[str | None, ...], list[R]]:
    """Rows by their values of ``by`` (:func:`group_value`), groups in order of first appearance."""
    groups: dict[tuple[str | None, ...], list[R]] = defaultdict(list)
    for row in rows:
        groups[tuple(group_value(row, key) for key in by)].append(row)
    return dict(groups)


def _reasons(rows: Iterable[ScoreRow | PlanRow]) -> dict[str, int]:
    return dict(Counter(kind for row in rows if not row.valid for kind in row.reason_kinds).most_common())


#: The Monte Carlo means of a summary: the fields of :class:`~peakopt.oracle.tables.rows.MonteCarloMeans`.
MONTE_CARLO_MEANS = tuple(MonteCarloMeans.model_fields)


class MonteCarloSummary(MonteCarloMeans):
    """A group's Monte Carlo figures: per field of :data:`MONTE_CARLO_MEANS`, the mean over its records.

    ``records`` counts the rows scored under sampled scenarios, ``samples`` their scenarios;
    each mean's interval is in the summary's ``intervals`` as ``mc_<field>``.
    """

    records: int
    samples: int


class ScoreSummary(BaseModel):
    """Aggregates of one group of :class:`ScoreRow` (see the module docstring).

    ``efficiency`` is the mean over the rows that have one (a proven optimum
    to compare with); ``intervals`` holds, when asked for, the 95 % bootstrap
    interval of each mean by its field name (``efficiency``, ``safe_rate``,
    ``mean_makespan``..., ``gap`` for the gap's mean), where the sample has two
    values or more.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    group: dict[str, str | None]
    records: int
    invalid: int
    invalid_reasons: dict[str, int]
    efficiency: float | None = None
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
    intervals: dict[str, Interval] = Field(default_factory=dict)
    monte_carlo: MonteCarloSummary | None = None

    @model_serializer(mode="wrap")
    def _serialise(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return drop_absent(self, handler, "monte_carlo")


def row_values(row: ScoreRow) -> dict[str, float | None]:
    """One row's value in each mean of :class:`ScoreSummary`, by field (None: not in that mean).

    The one definition of what a row counts for: an MRU that a row did not
    earn (invalid for the strict MRU, unsafe for the safe MRU) is 0, an
    undefined one (makespan 0) None; makespans and cva count for valid rows,
    the gap for safe ones. The Inspect scorer reports the same values. The ``mc_`` values are
    the row's Monte Carlo figures.
    """
    valid = row.valid
    safe = valid and row.safe
    sampled = row.monte_carlo
    return {
        "efficiency": row.efficiency,
        "safe_rate": float(safe),
        "mean_makespan": row.makespan if valid else None,
        "mean_cva": row.cva if valid else None,
        "mean_avoidable_cva": row.avoidable_cva if valid else None,
        "strict_mru": row.strict_mru if valid else 0.0,
        "safe_mru": row.safe_mru if safe else 0.0,
        "gap": row.gap if safe else None,
        # a row's own Monte Carlo means (None without --samples); see MonteCarlo.scored
        **{f"mc_{key}": None if sampled is None else getattr(sampled, key) for key in MONTE_CARLO_MEANS},
    }


#: The means of :class:`ScoreSummary` that :func:`row_values` defines.
MEANS = tuple(row_values(ScoreRow(valid=False)))


def samples(rows: Sequence[ScoreRow]) -> dict[str, list[float | None]]:
    """The per-row values each mean of :class:`ScoreSummary` is the mean of (see :func:`row_values`)."""
    per_row = [row_values(row) for row in rows]
    return {key: [values[key] for values in per_row] for key in MEANS}


def summarise(
    rows: Sequence[ScoreRow], group: dict[str, str | None] | None = None, intervals: bool = False
) -> ScoreSummary:
    """Aggregates of ``rows`` as one group; ``intervals`` adds each mean's bootstrap interval."""
    valid = [r for r in rows if r.valid]
    values = samples(rows)
    safe = [r for r in valid if r.safe]
    found = _intervals(rows, values) if intervals else {}
    return ScoreSummary(
        group=group or {},
        records=len(rows),
        invalid=len(rows) - len(valid),
        invalid_reasons=_reasons(rows),
        efficiency=mean(values["efficiency"]),
        safe_rate=mean(values["safe_rate"]) or 0.0,
        mean_makespan=mean(values["mean_makespan"]),
        mean_cva=mean(values["mean_cva"]),
        mean_avoidable_cva=mean(values["mean_avoidable_cva"]),
        strict_mru=mean(values["strict_mru"]),
        safe_mru=mean(values["safe_mru"]),
        gap=Stats.of(values["gap"]),
        gap_vs_lb=Stats.of(r.gap_vs_lb for r in safe),
        gap_vs_ub=Stats.of(r.gap_vs_ub for r in safe),
        pushed=sum(r.pushed for r in rows),
        filled=sum(r.filled for r in rows),
        intervals={key: interval for key, interval in found.items() if interval is not None},
        monte_carlo=_monte_carlo(rows, values),
    )


def _intervals(rows: Sequence[ScoreRow], values: dict[str, list[float | None]]) -> dict[str, Interval | None]:
    """Each mean's interval, resampling questions: a question's answers averaged first."""
    ids = questions(rows, question_keys(rows))
    return {key: mean_interval(means_by(ids, sample).values()) for key, sample in values.items()}


def _monte_carlo(rows: Sequence[ScoreRow], values: dict[str, list[float | None]]) -> MonteCarloSummary | None:
    sampled = [r.monte_carlo for r in rows if r.monte_carlo is not None]
    if not sampled:
        return None
    means = {key: mean(values[f"mc_{key}"]) for key in MONTE_CARLO_MEANS}
    return MonteCarloSummary(records=len(sampled), samples=sum(m.samples for m in sampled), **means)


def _aggregate(
    rows: Sequence[R], by: Sequence[str], summary: Callable[[list[R], dict[str, str | None]], Any]
) -> list[Any]:
    check_group_keys(rows, by)
    groups = group_rows(rows, by)
    return [summary(members, dict(zip(by, key, strict=True))) for key, members in groups.items()]


def aggregate(
    rows: Sequence[ScoreRow], by: Sequence[str] = ("source",), intervals: bool = False
) -> list[ScoreSummary]:
    """Aggregates per group of rows sharing the values of ``by`` (fields of :data:`GROUP_KEYS`).

    Parameters
    ----------
    rows
        Score rows, e.g. from :func:`~peakopt.oracle.tables.score_rows.score_record`.
    by
        Grouping fields; empty for one group of all rows.
    intervals
        Add each mean's seeded 95 % bootstrap interval
        (:func:`~peakopt.oracle.tables.intervals.mean_interval`).

    Returns
    -------
    list of ScoreSummary
        One per group, in order of first appearance.
    """
    return _aggregate(rows, by, lambda group, key: summarise(group, key, intervals))


class PlanSummary(BaseModel):
    """Aggregates of one group of :class:`PlanRow`: means over the valid predictions."""

    model_config = ConfigDict(frozen=True, defer_build=True)

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

    model_config = ConfigDict(frozen=True, defer_build=True)

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
