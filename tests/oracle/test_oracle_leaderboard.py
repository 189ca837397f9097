"""The leaderboard: ranks, epochs averaged per pair, paired differences on common pairs."""

from __future__ import annotations

import pytest

from peakopt.oracle.tables.intervals import Interval
from peakopt.oracle.tables.leaderboard import Values, by_pair, differences, standings
from peakopt.oracle.tables.rows import ScoreRow


def _row(source: str, workflow: str, value: float | None, machine: str = "small") -> ScoreRow:
    # The value rides in makespan so the test picks it out with a plain accessor.
    return ScoreRow(source=source, workflow=workflow, machine=machine, valid=True, makespan=value)


def _makespan(row: ScoreRow) -> float | None:
    return row.makespan


def test_a_constant_lead_is_found_exactly() -> None:
    # Model a is 0.1 better than b on every pair, whatever the pair's own level.
    levels = [0.2, 0.5, 0.9, 0.4, 0.7]
    rows = [_row("b", f"w{i}", level) for i, level in enumerate(levels)]
    rows += [_row("a", f"w{i}", level + 0.1) for i, level in enumerate(levels)]
    values = by_pair(rows, _makespan)
    ranked = standings(values)
    assert [(s.rank, s.source, s.pairs) for s in ranked] == [(1, "a", 5), (2, "b", 5)]
    assert ranked[0].mean == pytest.approx(0.64)
    [difference] = differences(values, ranked)
    assert (difference.better, difference.worse, difference.pairs) == ("a", "b", 5)
    assert difference.mean == pytest.approx(0.1)
    assert difference.interval is not None
    assert difference.interval.low == pytest.approx(0.1)
    assert difference.interval.high == pytest.approx(0.1)
    # The means' own intervals are wide: the pairs differ far more than the models.
    assert ranked[0].interval is not None
    assert ranked[0].interval.high - ranked[0].interval.low > 0.2


def test_differences_use_only_the_common_pairs() -> None:
    rows = [_row("a", "w1", 1.0), _row("a", "w2", 0.5), _row("a", "w3", 0.0)]
    rows += [_row("b", "w2", 0.25), _row("b", "w3", 0.5), _row("b", "w4", 1.0)]
    values = by_pair(rows, _makespan)
    ranked = standings(values)
    assert [s.source for s in ranked] == ["b", "a"]  # means 0.583 and 0.5
    [difference] = differences(values, ranked)
    # b - a on w2 and w3: -0.25 and +0.5
    assert difference.pairs == 2
    assert difference.mean == pytest.approx(0.125)
    assert difference.interval == Interval(low=-0.25, high=0.5)


def test_epochs_are_averaged_per_pair_and_undefined_values_left_out() -> None:
    rows = [_row("a", "w1", 1.0), _row("a", "w1", 0.0), _row("a", "w2", 1.0), _row("a", "w3", None)]
    values = by_pair(rows, _makespan)
    assert values == {"a": {("w1", "small"): 0.5, ("w2", "small"): 1.0}}
    [standing] = standings(values)
    assert standing.mean == pytest.approx(0.75)


def test_pairs_are_told_apart_by_every_key() -> None:
    rows = [_row("a", "w1", 1.0, machine="small"), _row("a", "w1", 0.0, machine="large")]
    assert by_pair(rows, _makespan) == {"a": {("w1", "small"): 1.0, ("w1", "large"): 0.0}}
    assert by_pair(rows, _makespan, keys=("workflow",)) == {"a": {("w1",): 0.5}}


def test_equal_means_share_a_rank_in_name_order() -> None:
    values: Values = {"z": {("w",): 0.5}, "a": {("w",): 0.5}, "m": {("w",): 0.9}}
    assert [(s.rank, s.source) for s in standings(values)] == [(1, "m"), (2, "a"), (2, "z")]
    assert [(d.better, d.worse) for d in differences(values, standings(values))] == [
        ("m", "a"),
        ("m", "z"),
        ("a", "z"),
    ]


def test_no_common_pair_has_no_difference() -> None:
    values: Values = {"a": {("w1",): 1.0}, "b": {("w2",): 0.5}}
    [difference] = differences(values, standings(values))
    assert (difference.pairs, difference.mean, difference.interval) == (0, None, None)
