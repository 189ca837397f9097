"""The bootstrap interval of a mean: hand-computed cases, degenerate samples, seeding."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from peakopt.oracle.tables.intervals import Interval, mean_interval


def test_two_values_cover_both_ends() -> None:
    # Resampling {0, 1} twice gives means 0, 0.5, 1 with chances 1/4, 1/2, 1/4:
    # the 2.5 % and 97.5 % quantiles are 0 and 1.
    assert mean_interval([0.0, 1.0]) == Interval(low=0.0, high=1.0)


def test_ninety_percent_of_three_values_by_hand() -> None:
    # Resampling {0, 0, 1} three times: the count of ones is Binomial(3, 1/3),
    # so the mean is 0, 1/3, 2/3, 1 with chances 8/27, 12/27, 6/27, 1/27. The
    # cumulative chance reaches 0.95 at 2/3 (26/27 = 0.963) and is 0.296 at 0.
    interval = mean_interval([0.0, 0.0, 1.0], level=0.90)
    assert interval is not None
    assert interval.low == 0.0
    assert interval.high == pytest.approx(2 / 3)
    assert interval.level == 0.90


def test_equal_values_are_their_own_interval() -> None:
    assert mean_interval([0.75, 0.75, 0.75]) == Interval(low=0.75, high=0.75)


def test_one_value_has_no_interval_and_none_are_left_out() -> None:
    assert mean_interval([0.5]) is None
    assert mean_interval([]) is None
    assert mean_interval([None, 0.5, None]) is None
    assert mean_interval([None, 0.0, 1.0]) == Interval(low=0.0, high=1.0)


@pytest.mark.parametrize(("level", "resamples"), [(0.0, 10), (1.0, 10), (1.5, 10), (0.95, 0)])
def test_bad_settings_are_refused(level: float, resamples: int) -> None:
    with pytest.raises(ValueError, match="must be"):
        mean_interval([0.0, 1.0], level=level, resamples=resamples)


def test_bca_is_available() -> None:
    interval = mean_interval([0.1, 0.4, 0.35, 0.8, 0.9, 0.2], method="BCa", resamples=999)
    assert interval is not None
    assert 0.1 <= interval.low < interval.high <= 0.9


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=2, max_size=40),
    st.integers(min_value=0, max_value=2**32 - 1),
)
def test_intervals_are_seeded_and_inside_the_sample(values: list[float], seed: int) -> None:
    interval = mean_interval(values, resamples=199, seed=seed)
    assert interval is not None
    assert min(values) <= interval.low <= interval.high <= max(values)
    assert mean_interval(values, resamples=199, seed=seed) == interval
