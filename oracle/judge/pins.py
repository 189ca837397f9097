"""The oracle's check of a re-plan: fixed starts kept, release times respected.

A re-planned schedule (:func:`peakopt.solver.solve` with ``fixed`` and ``release``) must start
each fixed step exactly where it already started and no released step before its release.
:func:`broken_pins` says which of those it breaks, independently of the solver (it reads only
the schedule's starts); :func:`peakopt.oracle.evaluate` judges the rest (dependencies, peaks).
Times compare as the oracle compares every time (:func:`~peakopt.oracle.base.exact.same_time`).
"""

from __future__ import annotations

from collections.abc import Mapping

from peakopt.models import Schedule
from peakopt.oracle.base.exact import before, same_time


def broken_pins(
    schedule: Schedule,
    fixed: Mapping[str, float] | None = None,
    release: Mapping[str, float] | None = None,
) -> list[str]:
    """One line per fixed start not kept and per release time broken (empty: the schedule keeps them).

    Parameters
    ----------
    schedule
        The schedule to check.
    fixed
        Step id -> the start it must have (seconds).
    release
        Step id -> the earliest start it may have (seconds).

    Returns
    -------
    list of str
        E.g. ``"step 'fetch' starts at 0.5 s, not at its fixed start 0 s"``, ``"step 'sum'
        starts at 1 s, before its release at 2 s"``, ``"step 'x' has no start"``; in the order
        of ``fixed``, then of ``release``.
    """
    broken: list[str] = []
    for step, at in (fixed or {}).items():
        start = schedule.starts.get(step)
        if start is None:
            broken.append(f"step {step!r} has no start (fixed at {at:g} s)")
        elif not same_time(start, at):
            broken.append(f"step {step!r} starts at {start:g} s, not at its fixed start {at:g} s")
    for step, at in (release or {}).items():
        start = schedule.starts.get(step)
        if start is None:
            broken.append(f"step {step!r} has no start (released at {at:g} s)")
        elif before(start, at):
            broken.append(f"step {step!r} starts at {start:g} s, before its release at {at:g} s")
    return broken
