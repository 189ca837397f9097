"""Numbers as their authors wrote them, in exact arithmetic, and the oracle's one tolerance.

The oracle reads every duration, demand, capacity and start as the shortest
decimal that prints as that float (``0.1`` is one tenth, not
0.1000000000000000055...) and computes with integers in a common decimal unit:
0.1 + 0.2 is exactly 0.3, and no rounding of the oracle's own enters a verdict
or a figure (each figure is rounded once, to the nearest float, at the end).

What it cannot know is the float noise of the program that produced the
times: a start computed as 0.7 + 0.1 = 0.7999999999999999 for a step that
should follow one ending at 0.8, or T − x computed backwards from a makespan
T, whose error is relative to T. :data:`TOLERANCE` absorbs that and nothing
else, relatively, so the same in seconds as in microseconds: two instants of
a schedule are the same instant when they differ by at most ``TOLERANCE``
times the schedule's time scale (its largest ``|time|``: the makespan of a
schedule that starts at 0), about 4,500 ulps of it; and a load above a
capacity by at most ``TOLERANCE`` of the capacity is at capacity. So a 10 ms
overload counts in a schedule of 10**7 s (10**-9 of it), a 1 µs sliver does not.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from fractions import Fraction

#: Significant decimal digits to which two instants (or a load and its capacity) must agree.
TOLERANCE_DIGITS = 12
#: Relative tolerance of times and loads (see the module docstring): 1e-12.
TOLERANCE = 10.0**-TOLERANCE_DIGITS
_SCALE: int = 10**TOLERANCE_DIGITS


def digits(x: float) -> tuple[int, int]:
    """``(m, e)`` such that ``m · 10**e`` is the shortest decimal of ``x`` (``repr``'s digits).

    ``digits(0.1) == (1, -1)``, ``digits(1000000.001) == (1000000001, -3)``,
    ``digits(2e-07) == (2, -7)``. ``x`` must be finite.
    """
    mantissa, _, power = repr(x).partition("e")
    whole, _, decimals = mantissa.partition(".")
    decimals = decimals.rstrip("0")
    return int(whole + decimals), (int(power) if power else 0) - len(decimals)


def fraction(x: float) -> Fraction:
    """The shortest decimal of ``x`` as an exact fraction (``fraction(0.1) == Fraction(1, 10)``)."""
    m, e = digits(x)
    return Fraction(m * 10**e) if e >= 0 else Fraction(m, 10**-e)


def on_grid(values: Iterable[float]) -> tuple[int, list[int]]:
    """A common exponent ``E`` and every value as an exact integer multiple of ``10**E``.

    ``E`` is the smallest exponent among the values (0 when there are none),
    so the integers are as small as exactness allows.
    """
    parts = [digits(v) for v in values]
    exponent = min((e for _, e in parts), default=0)
    return exponent, [m * 10 ** (e - exponent) for m, e in parts]


def to_float(numerator: int, exponent: int = 0, denominator: int = 1) -> float:
    """``numerator · 10**exponent / denominator`` rounded once, to the nearest float (±inf past the range)."""
    value = (
        Fraction(numerator * 10**exponent, denominator)
        if exponent >= 0
        else Fraction(numerator, denominator * 10**-exponent)
    )
    try:
        return float(value)
    except OverflowError:  # a ratio of 1e300 to 1e-300: no float holds it
        return math.inf if value > 0 else -math.inf


def close(a: int, b: int, scale: int) -> bool:
    """Whether two instants on a common integer grid are the same in a schedule of time ``scale``."""
    return abs(a - b) * _SCALE <= scale


def over(load: int, capacity: int) -> bool:
    """Whether ``load`` exceeds ``capacity`` (on a common integer grid) by more than the tolerance."""
    return load * _SCALE > capacity * (_SCALE + 1)


def same_time(a: float, b: float, scale: float | None = None) -> bool:
    """Whether two times in seconds are the same instant for the oracle.

    This is the one way the oracle compares times (dependencies, overlaps,
    a makespan against the one a schedule gives): exactly, on the shortest
    decimals, with the relative :data:`TOLERANCE`:
    ``|a − b| <= 1e-12 · scale``. ``same_time(0.1 + 0.2, 0.3)`` is True,
    ``same_time(1e7, 1e7 + 0.01)`` is False; 0 is only the same as 0. A scale below the
    smallest normal float (subnormal times, whose decimals have fewer digits) counts as that.

    Parameters
    ----------
    a, b
        Finite times, in any unit (the test is scale-invariant).
    scale
        The time scale of the schedule they belong to: its largest ``|time|``
        (for a schedule from 0, its makespan). By default ``max(|a|, |b|)``,
        which is that scale when one of them is the makespan.
    """
    span = max(abs(a), abs(b)) if scale is None else abs(scale)
    if span < sys.float_info.min:
        # subnormal floats carry fewer digits than the tolerance assumes (a step of 1e-11 relative
        # at 4e-313): below the smallest normal float, measure against it instead
        span = sys.float_info.min if span > 0 else 0.0
    _, (x, y, grid_span) = on_grid((a, b, span))
    return close(x, y, grid_span)


def before(a: float, b: float, scale: float | None = None) -> bool:
    """Whether time ``a`` is earlier than ``b`` and not the same instant (:func:`same_time`)."""
    return a < b and not same_time(a, b, scale)
