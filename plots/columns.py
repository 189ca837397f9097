"""Aggregates as named, formatted columns, and the number formats of every table cell.

One definition serves the terminal tables (``peakopt score``, ``peakopt
report``), plot titles and the HTML report, so they always show the same
figures. Presentation only: the oracle computes the figures and formats none.
"""

from __future__ import annotations

from collections.abc import Callable

from peakopt.oracle.aggregate import ScoreSummary, Stats
from peakopt.oracle.exact import TOLERANCE

#: A column: its header and how to format one summary's cell.
Column = tuple[str, Callable[[ScoreSummary], str]]


def number(value: float | None, digits: int = 3) -> str:
    """``1.235`` (``-`` for None; never ``-0.000``)."""
    return "-" if value is None else f"{round(value, digits) + 0.0:.{digits}f}"


def figure(value: float | None, digits: int = 6) -> str:
    """A measured number in a table: ``digits`` significant digits, without float noise (``-`` for None).

    What the oracle's arithmetic leaves below :data:`~peakopt.oracle.exact.TOLERANCE`
    (a cva of ``5.24e-16``) is 0, and never ``-0``; ``12.000000000000002`` is ``12``.
    """
    if value is None:
        return "-"
    return f"{(0.0 if abs(value) <= TOLERANCE else value) + 0.0:.{digits}g}"


def percent(value: float | None) -> str:
    """``12.5%`` for 0.125 (``-`` for None; never ``-0.0%``)."""
    return "-" if value is None else f"{round(100 * value, 1) + 0.0:.1f}%"


def gap_cell(gap: float | None, safe: bool, valid: bool = True) -> str:
    """One schedule's gap: ``+12.5%``; ``unsafe`` or ``invalid`` when it has none for that reason; ``-``.

    An unsafe schedule's gap is never shown, even where it could be computed
    (see :func:`peakopt.oracle.evaluate.with_reference`).
    """
    if not valid:
        return "invalid"
    if not safe:
        return "unsafe"
    return "-" if gap is None else f"{round(100 * gap, 1) + 0.0:+.1f}%"


def stat(stats: Stats | None, field: str) -> str:
    """One statistic of a gap distribution, as a percentage."""
    return percent(None if stats is None else getattr(stats, field))


def group_label(group: dict[str, str | None]) -> str:
    """``easy / small`` for a group's values (``all`` for no grouping)."""
    return " / ".join(str(v) if v is not None else "-" for v in group.values()) or "all"


def summary_columns(gaps: bool = True, failed: str | None = None) -> list[Column]:
    """The columns of a scheduling summary, for every table that shows one (terminal and HTML).

    Parameters
    ----------
    gaps
        Include the gap columns (when references were given).
    failed
        The reason kind of failed runs (a campaign's ``error``): adds an
        ``errors`` column counting them (they count as invalid too).
    """
    columns: list[Column] = [("rows", lambda s: str(s.records))]
    if failed is not None:
        columns.append(("errors", lambda s: str(s.invalid_reasons.get(failed, 0))))
    columns += [
        ("invalid", lambda s: str(s.invalid)),
        ("safe", lambda s: percent(s.safe_rate)),
        ("makespan", lambda s: number(s.mean_makespan, 2)),
        ("cva", lambda s: number(s.mean_cva)),
        ("avoidable cva", lambda s: number(s.mean_avoidable_cva)),
        ("strict MRU", lambda s: number(s.strict_mru)),
        ("safe MRU", lambda s: number(s.safe_mru)),
    ]
    if gaps:
        columns.append(("with gap", lambda s: str(s.gap.count if s.gap else 0)))
        columns += [_gap(f"gap {field}", "gap", field) for field in ("mean", "median", "p95", "max")]
        columns.append(_gap("gap vs LB max", "gap_vs_lb", "max"))
    return columns


def _unsafe(summary: ScoreSummary) -> bool:
    """Whether a group's schedules are valid but none safe: their gaps are withheld, not unknown."""
    return summary.records > summary.invalid and summary.safe_rate == 0


def _gap(header: str, name: str, field: str) -> Column:
    def cell(s: ScoreSummary) -> str:
        stats: Stats | None = getattr(s, name)
        return "unsafe" if stats is None and _unsafe(s) else stat(stats, field)

    return header, cell


def reasons(counts: dict[str, int]) -> str:
    """``missing 3, dependency 1``."""
    return ", ".join(f"{kind} {count}" for kind, count in counts.items())
