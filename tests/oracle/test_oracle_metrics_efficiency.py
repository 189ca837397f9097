"""Efficiency = OPT / makespan for a valid, safe schedule, 0 otherwise, None without a proven optimum."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from peakopt.models import SolveResult
from peakopt.oracle.judge.metrics import efficiency, gaps, proven_optimum

times = st.floats(min_value=0.01, max_value=1e6, allow_nan=False)


def optimum(makespan: float, *, exact: bool = True, status: str = "optimal") -> SolveResult:
    bound = makespan if status == "optimal" else makespan / 2
    return SolveResult.model_validate(
        {
            "workflow": "w",
            "machine": "m",
            "status": status,
            "makespan": makespan,
            "lower_bound": bound,
            "exact": exact,
        }
    )


@given(opt=times, slower=st.floats(min_value=1, max_value=100))
def test_a_safe_schedule_earns_opt_over_makespan_the_inverse_of_one_plus_its_gap(
    opt: float, slower: float
) -> None:
    makespan = opt * slower
    found = efficiency(makespan, True, optimum(opt))
    assert found is not None and 0 < found <= 1
    gap = gaps(makespan, optimum(opt))[0]
    assert gap is not None and found == pytest.approx(1 / (1 + gap))


@given(opt=times, makespan=times)
def test_an_unsafe_or_invalid_schedule_earns_nothing_however_fast(opt: float, makespan: float) -> None:
    assert efficiency(makespan, False, optimum(opt)) == 0.0
    assert efficiency(None, False, optimum(opt)) == 0.0


def test_the_optimum_itself_is_one_and_a_zero_length_optimum_too() -> None:
    assert efficiency(8.6, True, optimum(8.6)) == 1.0
    assert efficiency(0.0, True, optimum(0.0)) == 1.0


def test_without_a_proven_optimum_there_is_no_efficiency() -> None:
    assert efficiency(10.0, True, None) is None
    assert efficiency(10.0, False, None) is None
    assert efficiency(10.0, True, optimum(8.0, status="feasible")) is None
    assert efficiency(10.0, True, optimum(8.0, exact=False)) is None  # rounded data: not the true optimum
    assert proven_optimum(optimum(8.0)) == 8.0 and proven_optimum(optimum(8.0, status="feasible")) is None
