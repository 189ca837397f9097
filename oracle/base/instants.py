"""Event times compared as the judge compares them, fast enough for the event loops.

The simulator, the heuristics and the controller decide at *events*: a step ends, the steps it
held back are released. Two ends the judge calls the same instant
(:func:`~peakopt.oracle.base.exact.same_time`: on the shortest decimals, within the relative
tolerance) must be one event, whatever float sums reached them: 0.2 + 0.1 is 0.30000000000000004
in floats and 0.3 for the judge, so b (0.1 s, after a of 0.2 s) and c (0.3 s) end together and
release their successors together, in workflow order, as they do when the same data are written
in tenths of a second.

:func:`same_instant` is :func:`~peakopt.oracle.base.exact.same_time` behind a float test that settles
almost every comparison of an event loop without the exact arithmetic (times further apart than
twice the tolerance are different instants); :func:`tied` makes priority keys that are the same
instant equal, so that their ties are broken by position, as for exact data.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from peakopt.oracle.base.exact import TOLERANCE, same_time

#: Past this relative distance two floats are different instants whatever their decimals: the
#: tolerance, plus room for the float rounding of the difference itself.
_APART = 2 * TOLERANCE


def same_instant(a: float, b: float, scale: float | None = None) -> bool:
    """Whether two times are the same instant for the judge (:func:`~peakopt.oracle.base.exact.same_time`).

    Parameters
    ----------
    a, b
        Finite times.
    scale
        As :func:`~peakopt.oracle.base.exact.same_time` takes it (default ``max(|a|, |b|)``).
    """
    if a == b:
        return True
    span = max(abs(a), abs(b)) if scale is None else abs(scale)
    if abs(a - b) > _APART * max(span, sys.float_info.min):
        return False
    return same_time(a, b, scale)


def tied(keys: Sequence[float]) -> list[float]:
    """``keys`` with every run of keys that are the same instant set to the run's smallest.

    The scale is the largest ``|key|`` (keys are times or sums of times of one schedule); runs
    are measured from their first key, so a long chain of near neighbours never drifts.
    """
    if not keys:
        return []
    scale = max(abs(k) for k in keys)
    order = sorted(range(len(keys)), key=keys.__getitem__)
    out = list(keys)
    first = keys[order[0]]
    for j in order:
        if not same_instant(keys[j], first, scale):
            first = keys[j]
        out[j] = first
    return out
