"""Which answers a report shows as its worst cases, and how each is described.

A method's worst answers are of three kinds, and ranking by gap alone hides two
of them (an unsafe or invalid answer has no gap): the safe ones farthest from
the optimum, the unsafe ones that overflow a capacity the most (by avoidable
cva), and the invalid ones, which a reader needs with their reasons.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from peakopt.oracle.tables.rows import ScoreRow


@dataclass(frozen=True)
class Worst:
    """One method's worst answers of each kind, worst first, and how many of each there are in all."""

    by_gap: list[ScoreRow]
    unsafe: list[ScoreRow]
    invalid: list[ScoreRow]
    unsafe_count: int
    invalid_count: int


def ranking_gap(row: ScoreRow) -> float:
    """The gap to the optimum, else to the lower bound (NaN when neither is known)."""
    gap = row.gap if row.gap is not None else row.gap_vs_lb
    return math.nan if gap is None else gap


def pick_worst(rows: Sequence[ScoreRow], count: int) -> Worst:
    """The ``count`` worst answers of each kind among ``rows`` (one method's).

    Safe rows rank by gap (else gap to the lower bound), unsafe ones by
    avoidable cva; invalid ones keep their order (the first ``count``). Ties keep
    the rows' order.
    """
    safe = [r for r in rows if r.valid and r.safe and not math.isnan(ranking_gap(r))]
    unsafe = [r for r in rows if r.valid and not r.safe]
    invalid = [r for r in rows if not r.valid]
    return Worst(
        by_gap=sorted(safe, key=ranking_gap, reverse=True)[: max(0, count)],
        unsafe=sorted(unsafe, key=lambda r: r.avoidable_cva or 0.0, reverse=True)[: max(0, count)],
        invalid=invalid[: max(0, count)],
        unsafe_count=len(unsafe),
        invalid_count=len(invalid),
    )


def verdict(row: ScoreRow) -> str:
    """``safe``, ``unsafe`` or ``invalid``."""
    return "invalid" if not row.valid else ("safe" if row.safe else "unsafe")


def why(row: ScoreRow) -> str:
    """What is wrong with an answer: its gap, its overload (avoidable cva, first overflow) or reasons."""
    if not row.valid:
        return "; ".join(row.reasons) or "invalid"
    if row.safe:
        gap = ranking_gap(row)
        bound = "" if row.gap is not None else " (to the lower bound)"
        return "no reference" if math.isnan(gap) else f"gap {100 * gap:.1f}%{bound}"
    parts = [f"avoidable cva {row.avoidable_cva or 0.0:.3f}"]
    if row.dependency_violations:
        parts.append(f"{row.dependency_violations} broken dependencies")
    if row.overflows:
        more = len(row.overflows) - 1
        parts.append(row.overflows[0] + (f" (and {more} more)" if more else ""))
    return "; ".join(parts)


def case_title(method: str, row: ScoreRow, workflow: str, machine: str) -> str:
    """The caption of a worst case's drawing: who, where, and :func:`why`."""
    return f"{method} on {workflow} / {machine}: {verdict(row)}, {why(row)}"
