"""Numbers in answers: a finite float, or a string of one with a unit, in exact decimal arithmetic.

``"1.5"``, ``"1.5 s"``, ``"4800ms"``, ``"250 us"``, ``"2 min"``, ``"1 h"`` are
read (``"4800ms"`` is exactly the float ``4.8``); ``m`` alone (minutes or
milli?) and other units are not: :func:`unread_unit` names the unit for the
reason (:mod:`peakopt.oracle.answers.reasons`).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

#: Seconds per unit, as exact decimals.
UNITS = {
    **dict.fromkeys(("", "s", "sec", "secs", "second", "seconds"), Decimal(1)),
    **dict.fromkeys(("ms", "msec", "msecs", "millisecond", "milliseconds"), Decimal("0.001")),
    **dict.fromkeys(("us", "µs", "μs", "usec", "usecs", "microsecond", "microseconds"), Decimal("1e-6")),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), Decimal(60)),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), Decimal(3600)),
}
_NUMBER = re.compile(r"^([-+]?+(?:\d++\.?+\d*+|\.\d++)(?:[eE][-+]?+\d++)?+)\s*+([^\W\d_]*+)\.?$")


def read_number(raw: Any) -> float | None:
    """``raw`` as a finite float (numbers, numeric strings with an optional unit), else None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        try:
            value = float(raw)
        except OverflowError:  # an integer beyond the float range
            return None
    else:
        match = _NUMBER.match(raw.strip()) if isinstance(raw, str) else None
        unit = UNITS.get(match.group(2).lower()) if match else None
        if match is None or unit is None:
            return None
        try:
            value = float(Decimal(match.group(1)) * unit)
        except (InvalidOperation, ArithmeticError):
            return None
    return value if math.isfinite(value) else None


def unread_unit(raw: Any) -> str | None:
    """The unit of a number written with one peakopt does not read (``m`` of ``"0.08m"``), else None."""
    match = _NUMBER.match(raw.strip()) if isinstance(raw, str) else None
    return match.group(2) if match and match.group(2).lower() not in UNITS else None


def time_like(raw: Any) -> bool:
    """Whether a value is written as a time: a number, or text that starts like one (``"0.08m"``)."""
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return True
    return isinstance(raw, str) and bool(re.match(r"\s*[-+]?\.?\d", raw))
