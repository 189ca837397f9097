"""Efficiency, the one headline number of a schedule: OPT / makespan when valid and safe, else 0.

1 is the proven optimum; an unsafe or invalid answer earns nothing, however
fast it is, because its speed came from overflowing a capacity or breaking a
dependency. A safe schedule never beats the optimum (up to the oracle's time
tolerance), so the figure lies in [0, 1].

It is defined only against a *proven* optimum (a reference with status
``optimal`` on exactly scaled data, as :func:`peakopt.oracle.gap.gaps` reads
it): where only bounds are known the figure is None, never a guess.
"""

from __future__ import annotations

from peakopt.models import SolveResult


def proven_optimum(reference: SolveResult | None) -> float | None:
    """The reference's makespan when it is a proven optimum on exact data; None otherwise."""
    if reference is None or reference.status != "optimal" or not reference.exact:
        return None
    return reference.makespan


def efficiency(makespan: float | None, safe: bool, reference: SolveResult | None) -> float | None:
    """OPT / makespan of a valid, safe schedule; 0 for an invalid or unsafe one.

    Parameters
    ----------
    makespan
        The schedule's makespan (None when nothing could be scored).
    safe
        Whether the schedule is valid and safe (:attr:`peakopt.oracle.rows.ScoreRow.safe`
        is both).
    reference
        The reference result of the same workflow × machine.

    Returns
    -------
    float or None
        None without a proven optimum to compare with. A zero-length optimum
        reached by a zero-length schedule is 1.
    """
    optimum = proven_optimum(reference)
    if optimum is None:
        return None
    if not safe or makespan is None:
        return 0.0
    if makespan <= 0:
        return 1.0  # a safe schedule is never shorter than the optimum: both are 0
    return optimum / makespan
