"""A self-contained HTML report of a scoring or stress run: tables, charts, worst cases.

Everything is embedded (styles inline, images as data URIs), so the file
opens anywhere without a network.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from matplotlib.figure import Figure

from peakopt.models import Machine, Workflow
from peakopt.oracle.aggregate import ScoreSummary, aggregate
from peakopt.oracle.rows import ScoreRow
from peakopt.plots.charts import data_uri, gap_distribution, group_bars, makespan_vs_cva
from peakopt.plots.columns import summary_columns
from peakopt.plots.schedule_plot import Drawn, figure

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


def summary_html(summaries: Sequence[ScoreSummary], keys: Sequence[str], table_id: str) -> str:
    """An HTML table of aggregates, one row per group (the terminal tables' columns)."""
    columns = summary_columns(gaps=True)
    head = [f'<th class="key">{escape(k)}</th>' for k in keys] + [f"<th>{escape(h)}</th>" for h, _ in columns]
    body = []
    for s in summaries:
        cells = [f'<td class="key">{escape(str(s.group.get(k)))}</td>' for k in keys]
        cells += [f"<td>{escape(cell(s))}</td>" for _, cell in columns]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<table id="{table_id}"><thead><tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _image(fig: Figure | None, caption: str) -> str:
    if fig is None:
        return ""
    return (
        f'<figure><img src="{data_uri(fig)}" alt="{escape(caption)}">'
        f"<figcaption>{escape(caption)}</figcaption></figure>"
    )


def _by_section(rows: Sequence[ScoreRow], key: str) -> str:
    if all(getattr(r, key) is None for r in rows):
        return ""
    summaries = aggregate(rows, ("source", key))
    charts = _image(group_bars(summaries, key, "safe_rate"), f"safe rate per {key}")
    charts += _image(group_bars(summaries, key, "mean_gap"), f"mean gap to optimum (%) per {key}")
    return (
        f"<h2>Per {escape(key)}</h2>"
        + summary_html(summaries, ("source", key), f"by-{key}")
        + f'<div class="charts">{charts}</div>'
    )


def render_report(
    rows: Sequence[ScoreRow], *, title: str = "peakopt report", worst: Sequence[WorstCase] = ()
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
        Instances to draw as Gantt charts, typically the worst per method.

    Returns
    -------
    str
        A self-contained HTML page.
    """
    summaries = aggregate(rows, ("source",))
    parts = [
        f"<h1>{escape(title)}</h1>",
        f'<p class="note">{len(rows)} scored records. Gaps are to the proven optimum and '
        "cover safe schedules only.</p>",
        "<h2>Summary</h2>",
        summary_html(summaries, ("source",), "summary"),
        "<h2>Distributions</h2>",
        '<div class="charts">'
        + _image(gap_distribution(rows), "gap to optimum per method")
        + _image(makespan_vs_cva(rows), "makespan against cva")
        + "</div>",
        _by_section(rows, "tier"),
        _by_section(rows, "machine"),
    ]
    if worst:
        parts.append("<h2>Worst cases</h2>")
        for case in worst:
            fig = figure(case.workflow, case.machine, case.drawn)
            parts.append(_image(fig, case.title))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        + "\n".join(p for p in parts if p)
        + "</body></html>\n"
    )
