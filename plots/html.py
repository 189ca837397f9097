"""A self-contained HTML report of a scoring or stress run: tables, charts, worst cases.

Everything is embedded (styles inline, images as data URIs), so the file
opens anywhere without a network.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import TypeVar

from matplotlib.figure import Figure

from peakopt.models import Machine, Workflow
from peakopt.oracle.tables.aggregate import ScoreSummary, aggregate, group_rows
from peakopt.oracle.tables.leaderboard import Board, in_rank_order
from peakopt.oracle.tables.leaderboard import board as board_of
from peakopt.oracle.tables.pairs import with_settings
from peakopt.oracle.tables.rows import ScoreRow
from peakopt.plots.cells import Cells
from peakopt.plots.charts import PROFILE_NOTE, data_uri, gap_profile, group_bars, makespan_vs_cva
from peakopt.plots.columns import (
    DIFFERENCE_COLUMNS,
    NAME_HEADERS,
    STANDING_COLUMNS,
    Column,
    headline,
    summary_columns,
    unranked_note,
)
from peakopt.plots.schedule_plot import Drawn, figure
from peakopt.plots.worst import pick_worst, verdict, why

T = TypeVar("T")

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em; }
th, td { padding: 0.25em 0.6em; border-bottom: 1px solid #eee; text-align: right; }
th { background: #f5f5f5; } td.key, th.key { text-align: left; }
figure { margin: 1em 0; } figcaption { font-size: 0.85em; color: #555; }
img { max-width: 100%; height: auto; } .charts { display: flex; flex-wrap: wrap; gap: 1em; }
.note { color: #555; font-size: 0.9em; }
"""


@dataclass(frozen=True)
class WorstCase:
    """One bad instance to draw: the method's schedule next to the optimum."""

    title: str
    workflow: Workflow
    machine: Machine
    drawn: Sequence[Drawn]
    source: str = ""


INTERVALS_NOTE = "error bars: 95 % bootstrap confidence intervals of the mean (seeded)"


def summary_html(
    summaries: Sequence[ScoreSummary],
    keys: Sequence[str],
    table_id: str,
    columns: Sequence[Column] | None = None,
) -> str:
    """An HTML table of aggregates, one row per group, with the terminal table's ``columns``.

    ``columns`` defaults to the :func:`~peakopt.plots.columns.headline` of
    :func:`~peakopt.plots.columns.summary_columns` (with gaps), as the terminal table shows by default.
    """
    shown = headline(summary_columns(gaps=True)) if columns is None else columns
    head = [f'<th class="key">{escape(k)}</th>' for k in keys]
    head += [f"<th>{escape(h)}</th>" for h, _ in shown]
    body = []
    for s in summaries:
        cells = [f'<td class="key">{escape(_value(s.group.get(k)))}</td>' for k in keys]
        cells += [f"<td>{escape(cell(s))}</td>" for _, cell in shown]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<table id="{table_id}"><thead><tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _value(value: str | None) -> str:
    return "-" if value is None else value  # as the terminal tables show a missing group value


def _image(fig: Figure | None, caption: str) -> str:
    if fig is None:
        return ""
    return (
        f'<figure><img src="{data_uri(fig)}" alt="{escape(caption)}">'
        f"<figcaption>{escape(caption)}</figcaption></figure>"
    )


def _by_section(rows: Sequence[ScoreRow], key: str, columns: Sequence[Column] | None, ranked: Board) -> str:
    if all(getattr(r, key) is None for r in rows):
        return ""
    keys = with_settings(rows, ("source", key))
    summaries = in_rank_order(aggregate(rows, keys, intervals=True), lambda s: s.group.get("source"), ranked)
    charts = _image(
        group_bars(rows, key, "efficiency"),
        f"efficiency (OPT / makespan, 0 for an unsafe or invalid answer) per {key}; {INTERVALS_NOTE}",
    )
    charts += _image(group_bars(rows, key, "safe_rate"), f"safe schedules (%) per {key}; {INTERVALS_NOTE}")
    charts += _image(
        group_bars(rows, key, "mean_gap"),
        f"mean gap to the optimum (%) per {key}, safe rows; {INTERVALS_NOTE}",
    )
    return (
        f"<h2>Per {escape(key)}</h2>"
        + summary_html(summaries, keys, f"by-{key}", columns)
        + f'<div class="charts">{charts}</div>'
    )


def _cells_html(columns: Sequence[tuple[str, Callable[[T], str]]], items: Sequence[T], table_id: str) -> str:
    head = "".join(f"<th{_key(h)}>{escape(h)}</th>" for h, _ in columns)
    body = "".join(
        "<tr>" + "".join(f"<td{_key(h)}>{escape(cell(item))}</td>" for h, cell in columns) + "</tr>"
        for item in items
    )
    return f'<table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _key(header: str) -> str:
    return ' class="key"' if header in NAME_HEADERS else ""


def leaderboard_html(ranked: Board) -> str:
    """The "Leaderboard" section: standings and paired differences, and who is not ranked and why.

    '' with one source, which has nothing to be ranked against.
    """
    missing = unranked_note(ranked)
    said = f'<p class="note" id="unranked">{escape(missing)}</p>' if missing else ""
    if len(ranked.standings) < 2:
        return f'<h2 id="leaderboard">Leaderboard</h2>{said}' if said else ""
    keys = " × ".join(ranked.pair_keys)
    return (
        '<h2 id="leaderboard">Leaderboard</h2>'
        f'<p class="note">Sources ranked by mean efficiency (OPT / makespan; 0 for an unsafe or '
        f"invalid answer) over the {escape(keys)} pairs with a proven optimum, a source's answers "
        "to one pair averaged; 95 % bootstrap intervals (seeded).</p>"
        + _cells_html(STANDING_COLUMNS, ranked.standings, "standings")
        + said
        + f'<p class="note">Paired differences: the better minus the worse, on the {escape(keys)} '
        "pairs both answered; an interval that excludes 0 separates the two.</p>"
        + _cells_html(DIFFERENCE_COLUMNS, ranked.differences, "differences")
    )


def cells_html(cells: Cells, table_id: str) -> str:
    """A table of text cells (:class:`~peakopt.plots.cells.Cells`), its caption above it."""
    head = "".join(f'<th class="key">{escape(h)}</th>' for h in cells.headers)
    body = "".join(
        "<tr>" + "".join(f'<td class="key">{escape(line.get(h, ""))}</td>' for h in cells.headers) + "</tr>"
        for line in cells.lines
    )
    return (
        f'<p class="note">{escape(cells.caption)}</p>'
        f'<table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    )


def failing_html(rows: Sequence[ScoreRow], count: int, ranked: Board | None = None) -> str:
    """A table of each method's most unsafe and first invalid answers, with their reasons ('' if none).

    The methods in leaderboard order (``ranked``), else in order of appearance.
    """
    body, totals = [], []
    groups = list(group_rows(rows, ("source",)).items())
    if ranked is not None:
        groups = in_rank_order(groups, lambda group: group[0][0], ranked)
    for (source,), members in groups:
        worst = pick_worst(members, count)
        if worst.unsafe_count or worst.invalid_count:
            totals.append(f"{source}: {worst.unsafe_count} unsafe, {worst.invalid_count} invalid")
        for row in worst.unsafe + worst.invalid:
            cells = (source, row.workflow, row.machine, verdict(row), why(row))
            body.append(
                "<tr>" + "".join(f'<td class="key">{escape(str(c or "-"))}</td>' for c in cells) + "</tr>"
            )
    if not body:
        return ""
    head = "".join(f'<th class="key">{h}</th>' for h in ("source", "workflow", "machine", "verdict", "why"))
    return (
        "<h3>Unsafe and invalid answers</h3>"
        f'<p class="note">The {count} most unsafe (by avoidable cva) and the first {count} invalid '
        f"answers of each method; in all, {escape('; '.join(totals))}.</p>"
        f'<table id="failing"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )


def render_report(
    rows: Sequence[ScoreRow],
    *,
    title: str = "peakopt report",
    worst: Sequence[WorstCase] = (),
    listed: int = 3,
    columns: Sequence[Column] | None = None,
    board: Board | None = None,
    provenance: Cells | None = None,
    floor: Cells | None = None,
) -> str:
    """The whole report as one HTML document.

    Parameters
    ----------
    rows
        Scored records (from ``peakopt score`` or a stress campaign; ``source``
        is the method or model).
    title
        The page's title.
    worst
        Instances to draw as Gantt charts, typically the worst per method
        (see :func:`~peakopt.plots.worst.pick_worst`).
    listed
        How many unsafe and how many invalid answers of each method the
        worst-cases section lists, with their reasons (0: none).
    columns
        The summary tables' columns: the terminal table's, so both show the same (default: the
        headline ones, :func:`~peakopt.plots.columns.headline`).
    board
        The leaderboard, the first section when it ranks two sources or more
        (default: :func:`~peakopt.oracle.tables.leaderboard.board` of ``rows``). Every
        section lists the sources in its order.
    provenance
        Where the inputs come from: its caption (when, by which peakopt and oracle, of which
        suites) under the title, one line per input in the "Inputs" section, last.
    floor
        What the trivial answers earn on the same pairs (the "Floor" section, after the
        leaderboard; see :mod:`peakopt.campaign.floor`).

    Returns
    -------
    str
        A self-contained HTML page.
    """
    ranked = board_of(rows) if board is None else board
    keys = with_settings(rows, ("source",))  # rows of different settings are never merged
    summaries = in_rank_order(aggregate(rows, keys, intervals=True), lambda s: s.group.get("source"), ranked)
    parts = [
        f"<h1>{escape(title)}</h1>",
        f'<p class="note">{len(rows)} scored records. Gaps are to the proven optimum and '
        "cover safe schedules only.</p>",
        f'<p class="note" id="made">{escape(provenance.caption)}</p>' if provenance else "",
        leaderboard_html(ranked),
        f'<h2 id="floor">Floor</h2>{cells_html(floor, "floor-table")}' if floor else "",
        "<h2>Summary</h2>",
        summary_html(summaries, keys, "summary", columns),
        "<h2>Distributions</h2>",
        '<div class="charts">'
        + _image(gap_profile(rows), f"Gap profile: {PROFILE_NOTE}")
        + _image(makespan_vs_cva(rows), "makespan against cva, one translucent point per answer")
        + "</div>",
        _by_section(rows, "tier", columns, ranked),
        _by_section(rows, "machine", columns, ranked),
    ]
    failing = failing_html(rows, listed, ranked) if listed > 0 else ""
    if worst or failing:
        parts.append('<h2 id="worst">Worst cases</h2>')
        for case in in_rank_order(worst, lambda case: case.source, ranked):
            fig = figure(case.workflow, case.machine, case.drawn)
            parts.append(_image(fig, case.title))
        parts.append(failing)
    if provenance is not None:
        parts.append(f'<h2 id="inputs">Inputs</h2>{cells_html(provenance, "provenance")}')
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        + "\n".join(p for p in parts if p)
        + "</body></html>\n"
    )
