"""Aggregates of score rows, and the planning/scheduling correlation."""

from __future__ import annotations

import math

import pytest

from peakopt.oracle.judge.verdict import Violation
from peakopt.oracle.tables.aggregate import (
    Stats,
    aggregate,
    aggregate_plans,
    correlate,
    pair_rows,
    pearson,
    ranks,
    samples,
    spearman,
    summarise,
)
from peakopt.oracle.tables.intervals import Interval, mean_interval
from peakopt.oracle.tables.rows import PlanRow, ScoreRow
from peakopt.plots.columns import summary_columns


def row(source: str = "m", **fields: object) -> ScoreRow:
    base: dict[str, object] = {
        "workflow": "w",
        "machine": "x",
        "source": source,
        "valid": True,
        "makespan": 10.0,
        "cva": 0.0,
        "cva_floor": 0.0,
        "avoidable_cva": 0.0,
        "safe": True,
        "mru": 0.5,
        "strict_mru": 0.5,
        "safe_mru": 0.5,
        "dependency_violations": 0,
    }
    return ScoreRow.model_validate(base | fields)


ROWS = [
    row(gap=0.1),
    row(makespan=6.0, cva=0.5, avoidable_cva=0.5, safe=False, strict_mru=0.0, safe_mru=0.0, gap=-0.2),
    ScoreRow.invalid([Violation(kind="parse", message="empty response")], workflow="w", source="m"),
    row(makespan=12.0, mru=0.6, strict_mru=0.6, safe_mru=0.6, gap=0.3),
]


def test_summary_by_hand() -> None:
    s = summarise(ROWS)
    assert (s.records, s.invalid, s.invalid_reasons) == (4, 1, {"parse": 1})
    assert s.safe_rate == 0.5  # the invalid record counts as unsafe
    assert s.mean_makespan == pytest.approx((10 + 6 + 12) / 3)  # valid records only
    assert s.mean_cva == pytest.approx(0.5 / 3) and s.mean_avoidable_cva == pytest.approx(0.5 / 3)
    assert s.strict_mru == pytest.approx((0.5 + 0 + 0.6) / 4)  # invalid counts as 0
    assert s.safe_mru == pytest.approx((0.5 + 0.6) / 4)
    assert s.gap is not None  # over the safe records only: 0.1 and 0.3
    assert (s.gap.count, s.gap.max) == (2, 0.3)
    assert (s.gap.mean, s.gap.median, s.gap.p95) == pytest.approx((0.2, 0.2, 0.29))
    assert s.gap_vs_lb is None


def test_an_undefined_mru_leaves_its_record_out_of_the_mru_means() -> None:
    # a workflow of zero-duration steps: makespan 0, MRU undefined (None), not 0
    instant = row(makespan=0.0, mru=None, strict_mru=None, safe_mru=None)
    s = summarise([*ROWS, instant])
    assert s.strict_mru == pytest.approx((0.5 + 0 + 0.6) / 4)
    assert s.safe_mru == pytest.approx((0.5 + 0.6) / 4)
    alone = summarise([instant])
    assert alone.strict_mru is None and alone.safe_mru is None
    assert [cell(alone) for _, cell in summary_columns(gaps=False)][-2:] == ["-", "-"]


def test_groups_in_order_of_appearance() -> None:
    rows = [row("b"), row("a"), row("b", machine="y")]
    assert [s.group for s in aggregate(rows, ["source"])] == [{"source": "b"}, {"source": "a"}]
    assert [s.records for s in aggregate(rows, ["source", "machine"])] == [1, 1, 1]
    assert [s.records for s in aggregate(rows, [])] == [3]
    with pytest.raises(ValueError, match="unknown field colour"):
        aggregate(rows, ["colour"])
    with pytest.raises(ValueError, match="unknown field starts"):
        aggregate(rows, ["starts"])  # a field of many values is no group
    assert aggregate([], ["source"]) == []


def test_stats_of_nothing() -> None:
    assert Stats.of([None, None]) is None
    assert Stats.of([1.0]) == Stats(count=1, mean=1.0, median=1.0, p95=1.0, max=1.0)


def test_ranks_share_ties() -> None:
    assert ranks([10, 20, 20, 30]).tolist() == [1.0, 2.5, 2.5, 4.0]
    assert ranks([3, 1, 2]).tolist() == [3.0, 1.0, 2.0]


def test_correlations_by_hand() -> None:
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert pearson([1, 2, 3], [5, 5, 5]) is None and pearson([1], [2]) is None
    # ranks of y: 1, 2, 3.5, 5, 3.5 -> sum dx*dy = 8, sum dx^2 = 10, sum dy^2 = 9.5
    assert spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(8 / math.sqrt(95))
    assert spearman([1, 2, 3, 4], [1, 8, 27, 64]) == pytest.approx(1.0)
    assert pearson([1, 2, 3, 4], [1, 8, 27, 64]) < 1.0


def plan(source: str, f1: float, workflow: str = "w", valid: bool = True, id: str | None = None) -> PlanRow:  # noqa: A002 (as PlanRow.id)
    return PlanRow(workflow=workflow, source=source, valid=valid, edge_f1=f1 if valid else None, id=id)


def test_pairing_by_workflow_source_and_id() -> None:
    plans = [plan("m", 1.0, id="1"), plan("m", 0.5, id="2"), plan("n", 0.2), plan("n", 0.4, valid=False)]
    scores = [row("m", id="2", cva=3.0), row("m", id="1", cva=1.0), row("n", cva=2.0), row("n", cva=9.0)]
    pairs = pair_rows(plans, scores)
    assert [(p.edge_f1, s.cva) for p, s in pairs] == [(0.5, 3.0), (1.0, 1.0), (0.2, 2.0)]


def test_correlate_per_source() -> None:
    plans = [plan("m", f) for f in (1.0, 0.8, 0.5, 0.2)] + [plan("n", 0.3)]
    scores = [row("m", cva=c) for c in (0.0, 0.1, 0.6, 0.9)] + [row("n", cva=0.4)]
    found = {c.group["source"]: c for c in correlate(plans, scores)}
    assert found["m"].pairs == 4 and found["m"].spearman == pytest.approx(-1.0)
    assert found["m"].pearson is not None and found["m"].pearson < -0.9
    assert found["n"].pairs == 1 and found["n"].pearson is None


def test_plan_aggregates() -> None:
    rows = [
        PlanRow(source="m", valid=True, edge_f1=1.0, exact_match=True, cyclic=False),
        PlanRow(source="m", valid=True, edge_f1=0.5, exact_match=False, cyclic=True, hallucinated=["x"]),
        PlanRow.invalid([Violation(kind="parse", message="empty response")], source="m"),
    ]
    (s,) = aggregate_plans(rows)
    assert (s.records, s.invalid, s.invalid_reasons) == (3, 1, {"parse": 1})
    assert s.edge_f1 == 0.75 and s.exact_match_rate == 0.5 and s.cyclic == 1 and s.hallucinating == 1
    assert s.closure_f1 is None


def test_efficiency_is_the_headline_mean_and_garbage_counts_zero() -> None:
    rows = [
        row(efficiency=1.0),
        row(efficiency=0.5),
        ScoreRow.invalid([Violation(kind="parse", message="no schedule")], source="m", efficiency=0.0),
        row(efficiency=None),  # no proven optimum for its pair: left out
    ]
    [summary] = aggregate(rows)
    assert summary.efficiency == pytest.approx(0.5)
    assert summary.intervals == {}  # only when asked for


def test_every_mean_gets_the_interval_of_its_own_values() -> None:
    # each answer on a pair of its own: the intervals resample pairs (see the next tests)
    rows = [
        row(efficiency=e, makespan=m, gap=g, workflow=f"w{k}")
        for k, (e, m, g) in enumerate([(1.0, 10, 0.0), (0.8, 12.5, 0.25), (0.5, 20, 1.0)])
    ]
    rows.append(ScoreRow.invalid([Violation(kind="parse", message="x")], source="m", efficiency=0.0))
    [summary] = aggregate(rows, intervals=True)
    # efficiency over all four rows; makespan over the three valid ones; gap over the safe ones
    assert summary.intervals["efficiency"] == mean_interval([1.0, 0.8, 0.5, 0.0])
    assert summary.intervals["mean_makespan"] == mean_interval([10, 12.5, 20])
    assert summary.intervals["gap"] == mean_interval([0.0, 0.25, 1.0])
    assert summary.intervals["safe_rate"] == mean_interval([1, 1, 1, 0])
    # a sample of equal values is its own interval; each mean lies in its interval here
    assert summary.intervals["mean_cva"] == Interval(low=0.0, high=0.0)
    for key, interval in summary.intervals.items():
        value = summary.gap.mean if key == "gap" and summary.gap else getattr(summary, key)
        assert interval.low <= value <= interval.high, key


def test_intervals_resample_pairs_a_pairs_answers_averaged_first() -> None:
    # three answers to w0, one to w1: two pairs, whose values are the means 0.5 and 1.0
    rows = [row(efficiency=e, workflow="w0") for e in (0.0, 0.5, 1.0)] + [row(efficiency=1.0, workflow="w1")]
    [summary] = aggregate(rows, intervals=True)
    assert summary.efficiency == pytest.approx(0.625)  # the mean stays over rows
    assert summary.intervals["efficiency"] == mean_interval([0.5, 1.0])
    # one pair answered many times has no interval: a single value
    [alone] = aggregate(rows[:3], intervals=True)
    assert "efficiency" not in alone.intervals


def test_means_are_those_of_the_samples() -> None:
    rows = [row(), row(valid=False, safe=False, strict_mru=0.3), row(safe=False, safe_mru=0.0, mru=None)]
    values = samples(rows)
    [summary] = aggregate(rows)
    assert summary.strict_mru == pytest.approx(sum(v for v in values["strict_mru"] if v is not None) / 3)
    assert values["safe_mru"] == [0.5, 0.0, 0.0]
