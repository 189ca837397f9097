"""Aggregates as named, formatted columns, and the number formats of every table cell.

One definition serves the terminal tables (``peakopt score``, ``peakopt
report``), plot titles and the HTML report, so they always show the same
figures. Presentation only: the oracle computes the figures and formats none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from peakopt.oracle.base.exact import TOLERANCE

# the summaries' models are annotations only: a command's --help imports this module's headers and
# formats (``--columns``' help), and no pydantic
if TYPE_CHECKING:
    from peakopt.oracle.tables.aggregate import ScoreSummary, Stats
    from peakopt.oracle.tables.intervals import Interval
    from peakopt.oracle.tables.leaderboard import Board, Difference, Standing

#: A column: its header and how to format one summary's cell.
Column = tuple[str, Callable[["ScoreSummary"], str]]


def number(value: float | None, digits: int = 3) -> str:
    """``1.235`` (``-`` for None; never ``-0.000``)."""
    return "-" if value is None else f"{round(value, digits) + 0.0:.{digits}f}"


def figure(value: float | None, digits: int = 6) -> str:
    """A measured number in a table: ``digits`` significant digits, without float noise (``-`` for None).

    What the oracle's arithmetic leaves below :data:`~peakopt.oracle.base.exact.TOLERANCE`
    (a cva of ``5.24e-16``) is 0, and never ``-0``; ``12.000000000000002`` is ``12``.
    """
    if value is None:
        return "-"
    return f"{(0.0 if abs(value) <= TOLERANCE else value) + 0.0:.{digits}g}"


def percent(value: float | None) -> str:
    """``12.5%`` for 0.125 (``-`` for None; never ``-0.0%``)."""
    return "-" if value is None else f"{round(100 * value, 1) + 0.0:.1f}%"


def with_interval(value: float | None, interval: Interval | None, fmt: Callable[[float | None], str]) -> str:
    """A mean and its 95 % interval in one cell: ``0.912 [0.880, 0.940]`` (the mean alone without one).

    One format for every table (terminal, HTML, Markdown, LaTeX): the bounds
    in the mean's own format, in brackets, because a bootstrap interval need
    not be symmetric about the mean (a ``±`` would hide that).
    """
    if value is None or interval is None:
        return fmt(value)
    return f"{fmt(value)} [{fmt(interval.low)}, {fmt(interval.high)}]"


def mean_cell(field: str, fmt: Callable[[float | None], str]) -> Callable[[ScoreSummary], str]:
    """The cell of the summary's mean ``field`` with its interval (when the summary has one)."""

    def cell(s: ScoreSummary) -> str:
        value: float | None = getattr(s, field)
        return with_interval(value, s.intervals.get(field), fmt)

    return cell


def gap_cell(gap: float | None, safe: bool, valid: bool = True) -> str:
    """One schedule's gap: ``+12.5%``; ``unsafe`` or ``invalid`` when it has none for that reason; ``-``.

    An unsafe schedule's gap is never shown, even where it could be computed
    (see :func:`peakopt.oracle.judge.evaluate.with_reference`).
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
        Include the efficiency (first) and gap columns (when references were given).
    failed
        The reason kind of failed runs (a campaign's ``error``): adds an
        ``errors`` column counting them (they count as invalid too).
    """
    # the headline first; like the gaps it needs a proven optimum, so it comes with them
    columns: list[Column] = [("efficiency", mean_cell("efficiency", number))] if gaps else []
    columns.append(("rows", lambda s: str(s.records)))
    if failed is not None:
        columns.append(("errors", lambda s: str(s.invalid_reasons.get(failed, 0))))
    columns += [
        ("invalid", lambda s: str(s.invalid)),
        ("safe", mean_cell("safe_rate", percent)),
        ("makespan", mean_cell("mean_makespan", lambda v: number(v, 2))),
        ("cva", mean_cell("mean_cva", number)),
        ("avoidable cva", mean_cell("mean_avoidable_cva", number)),
        ("strict MRU", mean_cell("strict_mru", number)),
        ("safe MRU", mean_cell("safe_mru", number)),
    ]
    if gaps:
        columns.append(("with gap", lambda s: str(s.gap.count if s.gap else 0)))
        columns += [_gap(f"gap {field}", "gap", field) for field in ("mean", "median", "p95", "max")]
        columns.append(_gap("gap vs LB max", "gap_vs_lb", "max"))
    return columns


#: The headline columns, in table order: shown by default in every summary table (terminal,
#: Markdown, LaTeX, HTML) beside the group's own columns; ``--wide`` shows every column and
#: ``--columns`` names them. Efficiency (with its interval) is the one figure to rank by; the row
#: count, failed runs (``errors``, a campaign's) and invalid answers say what it rests on; the
#: safe rate and mean avoidable cva say how unsafe the rest were, the mean gap how slow the safe ones;
#: ``peakopt score``'s table ends with why answers were invalid (``invalid reasons``).
HEADLINE = ("efficiency", "rows", "errors", "invalid", "safe", "avoidable cva", "gap mean", "invalid reasons")

#: The headline's stand-in for efficiency and gap where no optimum is known (no references).
WITHOUT_OPTIMUM = "makespan"


def column_key(name: str) -> str:
    """A column's name as ``--columns`` matches it: any case, ``_`` or ``-`` for a space."""
    return " ".join(name.strip().lower().replace("_", " ").replace("-", " ").split())


def headline(columns: Sequence[Column]) -> list[Column]:
    """The :data:`HEADLINE` columns among ``columns``; :data:`WITHOUT_OPTIMUM` too without efficiency."""
    names = {column_key(h) for h, _ in columns}
    wanted = {*HEADLINE, *(() if "efficiency" in names else (WITHOUT_OPTIMUM,))}
    return [column for column in columns if column_key(column[0]) in wanted]


def shown_columns(
    columns: Sequence[Column], names: Sequence[str] | None = None, *, wide: bool = False
) -> list[Column]:
    """The columns a summary table shows: the :func:`headline` by default, all when ``wide``.

    Parameters
    ----------
    columns
        The table's columns (:func:`summary_columns`, in table order).
    names
        Columns by name (:func:`column_key`), shown in that order; a name this table has no
        column for (``efficiency`` without references, ``errors`` outside a campaign) is left out.
    wide
        Every column (``names`` ignored).
    """
    if wide:
        return list(columns)
    if names is None:
        return headline(columns)
    by_key = {column_key(column[0]): column for column in columns}
    return [by_key[key] for key in map(column_key, names) if key in by_key]


def _sampled(field: str, fmt: Callable[[float | None], str]) -> Callable[[ScoreSummary], str]:
    """A Monte Carlo mean of the summary (``-`` for a group without samples) with its interval."""

    def cell(s: ScoreSummary) -> str:
        value = None if s.monte_carlo is None else getattr(s.monte_carlo, field)
        return with_interval(value, s.intervals.get(f"mc_{field}"), fmt)

    return cell


#: The Monte Carlo table's headline, shown unless ``--wide``: what the runs rest on (their count), how
#: many were safe (``P(overflow)``: the hard resources' share of the unsafe ones), the makespan's
#: mean and tail, and the gap and efficiency against each scenario's own optimum. Behind ``--wide``:
#: the row count, the runs that broke a dependency (the other share of the unsafe ones) and the mean
#: avoidable cva.
MONTE_CARLO_HEADLINE = (
    "runs", "safe", "P(overflow)", "mean makespan", "p95 makespan", "mean gap vs PI", "efficiency vs PI"
)  # fmt: skip


def monte_carlo_columns(bounded: bool = False, *, wide: bool = True) -> list[Column]:
    """A summary's Monte Carlo columns; gap and efficiency with the perfect-information bound.

    Not ``wide``: the :data:`MONTE_CARLO_HEADLINE` ones (and the mean avoidable cva, without the bound).
    """
    columns: list[Column] = [
        ("rows", lambda s: str(s.monte_carlo.records if s.monte_carlo else 0)),
        ("runs", lambda s: str(s.monte_carlo.samples if s.monte_carlo else 0)),
        ("safe", _sampled("safe_rate", percent)),
        ("P(overflow)", _sampled("overflow_rate", percent)),
        ("dependency broken", _sampled("violation_rate", percent)),
        ("mean makespan", _sampled("mean_makespan", lambda v: number(v, 2))),
        ("p95 makespan", _sampled("p95_makespan", lambda v: number(v, 2))),
        ("mean avoidable cva", _sampled("mean_avoidable_cva", number)),
    ]
    if bounded:
        columns += [
            ("mean gap vs PI", _sampled("gap", percent)),
            ("efficiency vs PI", _sampled("efficiency", number)),
        ]
    if wide:
        return columns
    wanted = {*MONTE_CARLO_HEADLINE, *(() if bounded else ("mean avoidable cva",))}
    return [column for column in columns if column[0] in wanted]


def _unsafe(summary: ScoreSummary) -> bool:
    """Whether a group's schedules are valid but none safe: their gaps are withheld, not unknown."""
    return summary.records > summary.invalid and summary.safe_rate == 0


def _gap(header: str, name: str, field: str) -> Column:
    def cell(s: ScoreSummary) -> str:
        stats: Stats | None = getattr(s, name)
        if stats is None and _unsafe(s):
            return "unsafe"
        # the gap's mean is the one of its statistics with an interval (``intervals["gap"]``)
        interval = s.intervals.get(name) if field == "mean" else None
        return with_interval(None if stats is None else getattr(stats, field), interval, percent)

    return header, cell


def reasons(counts: dict[str, int]) -> str:
    """``missing 3, dependency 1``."""
    return ", ".join(f"{kind} {count}" for kind, count in counts.items())


#: The leaderboard's and differences' columns that hold names (left-aligned); the others are numbers.
NAME_HEADERS = ("source", "better", "worse")

#: The leaderboard's columns (terminal and HTML): rank, source, pairs, mean efficiency and its interval.
STANDING_COLUMNS: list[tuple[str, Callable[[Standing], str]]] = [
    ("rank", lambda s: str(s.rank)),
    ("source", lambda s: s.source),
    ("pairs", lambda s: str(s.pairs)),
    ("efficiency", lambda s: with_interval(s.mean, s.interval, number)),
]

#: The paired differences' columns: who leads whom, on how many common pairs, by how much.
DIFFERENCE_COLUMNS: list[tuple[str, Callable[[Difference], str]]] = [
    ("better", lambda d: d.better),
    ("worse", lambda d: d.worse),
    ("common pairs", lambda d: str(d.pairs)),
    ("efficiency difference", lambda d: with_interval(d.mean, d.interval, signed)),
]


def signed(value: float | None, digits: int = 3) -> str:
    """``+0.100`` (``-`` for None; never ``-0.000``): a difference shows its sign."""
    return "-" if value is None else f"{round(value, digits) + 0.0:+.{digits}f}"


def unranked_note(board: Board) -> str | None:
    """One line on the sources a leaderboard leaves out, or why there is none (None: nothing to say).

    A leaderboard ranks sources by efficiency, which needs a proven optimum: a source with none
    on any of its pairs is not ranked, and with fewer than two ranked there is no leaderboard.
    One source alone has nothing to be ranked against, and nothing is said.
    """
    if not board.unranked or len(board.standings) + len(board.unranked) < 2:
        return None
    names = ", ".join(board.unranked)
    why = "no proven optimum for any of its pairs (no efficiency)"
    if len(board.standings) >= 2:
        return f"leaderboard: {names} not ranked: {why}"
    ranked = f"; only {board.standings[0].source} has one" if board.standings else ""
    return f"no leaderboard: {names}: {why}{ranked}"
