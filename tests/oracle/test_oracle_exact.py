"""The shortest decimals of floats, exactly, and the oracle's one comparison of times."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from peakopt.oracle import TOLERANCE, same_time
from peakopt.oracle.base.exact import before, digits, fraction, on_grid, to_float


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (0.1, (1, -1)),
        (0.30000000000000004, (30000000000000004, -17)),
        (1000000.001, (1000000001, -3)),
        (2e-07, (2, -7)),
        (1.5e300, (15, 299)),
        (120.0, (120, 0)),
        (-0.25, (-25, -2)),
        (0.0, (0, 0)),
    ],
)
def test_digits_are_the_shortest_decimal(x: float, expected: tuple[int, int]) -> None:
    assert digits(x) == expected


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_the_shortest_decimal_prints_as_the_float(x: float) -> None:
    assert float(fraction(x)) == x
    assert fraction(x) == Fraction(repr(x))


def test_a_common_grid_holds_every_value_exactly() -> None:
    exponent, ints = on_grid([0.1, 0.2, 1000000.001])
    assert exponent == -3 and ints == [100, 200, 1000000001]
    assert ints[0] + ints[1] == 300  # 0.1 + 0.2 is 0.3 on the grid
    assert to_float(ints[0] + ints[1], exponent) == 0.3


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (0.1 + 0.2, 0.3, True),
        (0.7 + 0.1, 0.8, True),
        (1e7, 1e7 + 0.01, False),  # 10 ms is measurable at 1e7 s
        (1e7, 1e7 + 1e-6, True),  # 1 µs is not (1e-13 relative, about 500 ulps)
        (0.0, 1e-300, False),  # only 0 is the same as 0
        (1.0, 1.0 + 2 * TOLERANCE, False),
        # subnormal times carry fewer digits than the tolerance: a float step is 1e-11 relative here
        (2.2250738585e-313 + 2.2250738585e-313, 4.450147717e-313, True),
        (1e-300, 1.01e-300, False),  # a normal float keeps the relative rule
    ],
)
def test_same_time_is_relative_to_the_instants(a: float, b: float, same: bool) -> None:
    assert same_time(a, b) is same
    assert same_time(b, a) is same


@given(st.floats(1e-300, 1e300), st.floats(1e-300, 1e300), st.sampled_from([1e-6, 1e-3, 1e3, 1e6]))
def test_same_time_does_not_depend_on_the_unit(a: float, b: float, unit: float) -> None:
    # exactly in decimal: shift both by a power of ten, the verdict holds
    shift = round(math.log10(unit))
    moved = [float(fraction(x) * Fraction(10) ** shift) for x in (a, b)]
    if all(fraction(m) == fraction(x) * Fraction(10) ** shift for m, x in zip(moved, (a, b), strict=True)):
        assert same_time(*moved) == same_time(a, b)


@given(st.floats(5e-324, 1e-309), st.floats(5e-324, 1e-309))
def test_a_subnormal_sum_is_the_sum_of_its_decimals(a: float, b: float) -> None:
    # subnormal floats carry fewer digits than the tolerance: their float sum must still be the
    # same instant as the exact sum of their shortest decimals
    exact = fraction(a) + fraction(b)
    assert same_time(a + b, float(exact))


def test_before_is_strictly_earlier_and_not_the_same_instant() -> None:
    assert before(1.0, 2.0)
    assert not before(0.7 + 0.1, 0.8)  # float noise, not earlier
    assert not before(2.0, 1.0)


@pytest.mark.parametrize("length", [5e-324, 1e-321, 1e-310, 2e-308])
def test_the_judge_compares_subnormal_instants_as_same_time_does(length: float) -> None:
    # the list schedulers start a successor at an instant same_time calls the predecessor's end
    # (a subnormal time counts against the smallest normal float); the judge must agree
    from peakopt.models import Machine, Schedule, Task, Workflow
    from peakopt.oracle import evaluate

    workflow = Workflow(
        id="w", tasks=(Task(id="a", duration=length), Task(id="b", duration=0.0, depends_on=("a",)))
    )
    schedule = Schedule(workflow="w", machine="m", starts={"a": 0.0, "b": 0.0})
    score = evaluate(workflow, Machine(name="m", capacity={"cpu": 1.0}), schedule)
    assert score.valid is same_time(0.0, length), score.reasons
