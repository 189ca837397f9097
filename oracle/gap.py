"""Distance of a schedule's makespan from the oracle's optimum or bounds.

The rule every presenter follows is applied here, once: only a *safe*
schedule has a gap. The optimum is the best safe schedule, so an unsafe one
may well finish earlier — its speed came from overflowing a capacity, and a
negative gap would reward that. An unsafe (or invalid) schedule's gap figures
are None, and tables, plot titles and reports show ``unsafe`` instead
(:func:`peakopt.oracle.columns.gap_cell`).
"""

from __future__ import annotations

from peakopt.models import SolveResult
from peakopt.oracle.score import Score


def _relative(makespan: float, bound: float | None) -> float | None:
    if bound is None or bound <= 0:
        return None
    return (makespan - bound) / bound


def gaps(makespan: float, reference: SolveResult) -> tuple[float | None, float | None, float | None]:
    """``(gap, gap_vs_lb, gap_vs_ub)`` of ``makespan`` against a reference result.

    - gap = (makespan − OPT) / OPT, only when the reference is proven
      optimal on exactly scaled data (``status == "optimal"`` and ``exact``);
    - gap_vs_lb = (makespan − lower_bound) / lower_bound, an upper bound on
      the true gap;
    - gap_vs_ub = (makespan − reference makespan) / reference makespan,
      negative when the schedule beats the reference's schedule.

    Each is None when undefined: no such figure in the reference, or a zero bound.
    """
    optimal = reference.status == "optimal" and reference.exact
    lower = reference.lower_bound
    if lower is None and optimal:
        lower = reference.makespan
    return (
        _relative(makespan, reference.makespan) if optimal else None,
        _relative(makespan, lower),
        _relative(makespan, reference.makespan),
    )


def with_reference(score: Score, reference: SolveResult | None) -> Score:
    """``score`` with its gap figures filled from ``reference``, when it is safe.

    An invalid schedule (missing steps, broken dependencies...) gets no gap:
    its makespan is not that of a schedule of the workflow; nor does an
    unsafe one (see the module docstring).

    Raises
    ------
    ValueError
        When the reference is for another workflow or machine.
    """
    if reference is None or not score.safe:
        return score
    if (reference.workflow, reference.machine) != (score.workflow, score.machine):
        raise ValueError(
            f"reference is for {reference.workflow!r} on {reference.machine!r}, "
            f"the score for {score.workflow!r} on {score.machine!r}"
        )
    gap, gap_vs_lb, gap_vs_ub = gaps(score.makespan, reference)
    return score.model_copy(update={"gap": gap, "gap_vs_lb": gap_vs_lb, "gap_vs_ub": gap_vs_ub})
