"""Charts over many scored records: the gap profile, makespan against cva, bars with intervals.

Every chart is built from the score rows themselves, so the figures it shows
are the aggregates' (:mod:`peakopt.oracle.tables.aggregate`) and its intervals are the
oracle's seeded bootstrap (:func:`~peakopt.oracle.tables.intervals.mean_interval`).
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from peakopt.oracle.tables.aggregate import ScoreSummary, aggregate, group_rows
from peakopt.oracle.tables.pairs import with_settings
from peakopt.oracle.tables.rows import ScoreRow
from peakopt.plots.literal import legend, literal

#: What the profile's caption says, wherever it is shown.
PROFILE_NOTE = (
    "share of pairs whose schedule is safe and within x % of the optimum, one line per method; "
    "unsafe and invalid answers are never within any x, so a line stays below 1 by their share"
)


def _colour(index: int) -> tuple[float, ...]:
    colours: tuple[tuple[float, ...], ...] = colormaps["tab10"].colors  # type: ignore[attr-defined]
    return colours[index % len(colours)]


def _label(value: str | None) -> str:
    return value if value is not None else "(none)"


def _series(rows: Sequence[ScoreRow], but: str | None = None) -> list[str]:
    """What a chart draws in one colour: a source under one setting (rows of two never merge).

    The source and every setting the rows differ in (:func:`~peakopt.oracle.tables.pairs.with_settings`),
    less ``but`` (the chart's own axis).
    """
    return [key for key in with_settings(rows, ("source",)) if key != but]


def _series_label(key: Sequence[str | None]) -> str:
    """``asap`` for a source alone, ``asap / 0.3`` beside the settings that tell its series apart."""
    return " / ".join(_label(value) for value in key)


def profile_gap(row: ScoreRow) -> float | None:
    """A row's place on the gap profile, in %: ``inf`` when unsafe or invalid, None when not compared.

    A safe row's gap is to the proven optimum, else to the lower bound (an upper
    bound on the true gap: the profile then errs low, never high). A safe row
    with neither was scored without a reference and has no place.
    """
    if not (row.valid and row.safe):
        return math.inf
    gap = row.gap if row.gap is not None else row.gap_vs_lb
    return None if gap is None else 100 * gap


def profile_steps(gaps: Sequence[float], right: float) -> tuple[list[float], list[float]]:
    """The step line of an empirical distribution: x from 0 to ``right``, y the share of ``gaps`` <= x.

    Infinite gaps count in the total but are never reached.
    """
    total = len(gaps)
    finite = sorted(g for g in gaps if math.isfinite(g))
    xs, ys = [0.0], [0.0]
    for index, gap in enumerate(finite, start=1):
        if gap == xs[-1]:
            ys[-1] = index / total
        else:
            xs.append(gap)
            ys.append(index / total)
    xs.append(max(right, xs[-1]))
    ys.append(ys[-1])
    return xs, ys


@literal
def gap_profile(rows: Sequence[ScoreRow]) -> Figure | None:
    """ECDF (performance profile) of the gap per source: share of pairs within x % of the optimum.

    Unsafe and invalid rows count in each source's total and are never within
    any x (see :data:`PROFILE_NOTE`); None when no row was compared to a reference.
    """
    if not any(r.reference_status is not None or r.gap is not None or r.gap_vs_lb is not None for r in rows):
        return None
    groups = {
        _series_label(key): [g for g in map(profile_gap, members) if g is not None]
        for key, members in group_rows(rows, _series(rows)).items()
    }
    finite = [g for gaps in groups.values() for g in gaps if math.isfinite(g)]
    right = max(1.0, 1.05 * max(finite, default=0.0))
    fig = Figure(figsize=(6.4, 4.0), layout="constrained")
    ax = fig.subplots()
    entries = []
    for index, (source, gaps) in enumerate(groups.items()):
        if not gaps:
            continue
        xs, ys = profile_steps(gaps, right)
        never = sum(not math.isfinite(g) for g in gaps)
        label = f"{source} ({never} of {len(gaps)} unsafe or invalid)" if never else source
        (line,) = ax.step(
            xs, ys, where="post", color=_colour(index), label=label, linewidth=1.4, gid=f"profile-{source}"
        )
        entries.append((line, label))
    ax.set_xlim(0, right)
    ax.set_ylim(0, 1.02)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("gap to the optimum, x (%)")
    ax.set_ylabel("pairs within x % of the optimum")
    ax.set_title("Gap profile (unsafe and invalid answers never count as within)", fontsize=10)
    legend(ax, entries, fontsize=7, frameon=False, loc="lower right")
    ax.grid(color="0.92")
    return fig


@literal
def makespan_vs_cva(rows: Sequence[ScoreRow]) -> Figure | None:
    """Scatter of makespan against cva, one colour per source; None without valid rows.

    Points are translucent: safe schedules pile up on cva 0, and the pile's
    depth shows.
    """
    groups = group_rows([r for r in rows if r.valid and r.makespan is not None], _series(rows))
    if not groups:
        return None
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.subplots()
    entries = []
    for index, (key, members) in enumerate(groups.items()):
        points = np.array([(r.makespan, r.cva) for r in members], dtype=float)
        dots = ax.scatter(
            points[:, 0],
            points[:, 1],
            s=14,
            alpha=0.35,
            color=_colour(index),
            label=_series_label(key),
            linewidths=0,
        )
        entries.append((dots, _series_label(key)))
    ax.set_xlabel("makespan (s)")
    ax.set_ylabel("capacity violation area (capacity × s)")
    ax.set_title("Makespan against capacity violation", fontsize=10)
    # the key shows the colour, not the transparency
    for handle in legend(ax, entries, fontsize=7, frameon=False).legend_handles:
        if handle is not None:
            handle.set_alpha(1.0)
    ax.grid(color="0.92")
    return fig


@dataclass(frozen=True)
class BarMetric:
    """A mean of :class:`~peakopt.oracle.tables.aggregate.ScoreSummary` that bars show.

    ``field`` names it in the summary's ``intervals``; ``mean`` reads it; ``scale``
    turns it into the axis' unit (100 for a percentage); ``label`` is the axis'.
    """

    label: str
    field: str
    mean: Callable[[ScoreSummary], float | None]
    scale: float = 1.0


#: The bars' metrics: means of the aggregates, with their intervals, so a bar is the table's figure.
BAR_METRICS = {
    "efficiency": BarMetric("efficiency (OPT / makespan; 0 if unsafe)", "efficiency", lambda s: s.efficiency),
    "safe_rate": BarMetric("safe schedules (%)", "safe_rate", lambda s: s.safe_rate, 100.0),
    "mean_gap": BarMetric(
        "mean gap to the optimum (%)", "gap", lambda s: s.gap.mean if s.gap else None, 100.0
    ),
}


def _bar(summary: ScoreSummary | None, chosen: BarMetric) -> tuple[float, float, float]:
    """Height, and the distances down and up to the interval's ends (0 without an interval)."""
    mean = None if summary is None else chosen.mean(summary)
    if summary is None or mean is None:
        return math.nan, 0.0, 0.0
    interval = summary.intervals.get(chosen.field)
    if interval is None:
        return chosen.scale * mean, 0.0, 0.0
    # the interval resamples questions (a pair's epochs averaged first), the mean is over rows: with
    # uneven epochs, or in the last digit, the mean may sit just outside it; a bar's whisker is never negative
    below, above = max(0.0, mean - interval.low), max(0.0, interval.high - mean)
    return chosen.scale * mean, chosen.scale * below, chosen.scale * above


@literal
def group_bars(rows: Sequence[ScoreRow], by: str, metric: str = "safe_rate") -> Figure | None:
    """Bars of a mean (:data:`BAR_METRICS`) per value of ``by`` (e.g. tier), one colour per source.

    Each bar carries its seeded 95 % bootstrap interval
    (:func:`~peakopt.oracle.tables.aggregate.aggregate` with ``intervals``) as an error
    bar; a group without the figure has no bar (not a bar at 0, which would
    read as a perfect gap). None when no group has the figure.
    """
    chosen = BAR_METRICS[metric]
    series = _series(rows, but=by)
    summaries = aggregate(rows, [*series, by], intervals=True)
    if not any(chosen.mean(s) is not None for s in summaries):
        return None
    lookup = {(tuple(s.group[k] for k in series), s.group[by]): s for s in summaries}
    sources = list(dict.fromkeys(key[0] for key in lookup))
    values = list(dict.fromkeys(key[1] for key in lookup))
    fig = Figure(figsize=(1.8 + 0.9 * len(values) * max(1, len(sources)) ** 0.5, 3.4), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / max(1, len(sources))
    entries = []
    for index, source in enumerate(sources):
        heights, below, above = zip(*(_bar(lookup.get((source, v)), chosen) for v in values), strict=True)
        bars = ax.bar(
            np.arange(len(values)) + index * width,
            heights,
            width,
            yerr=[below, above],
            capsize=3,
            error_kw={"elinewidth": 0.8, "ecolor": "0.25"},
            color=_colour(index),
            label=_series_label(source),
        )
        entries.append((bars, _series_label(source)))
    ax.set_xticks(np.arange(len(values)) + width * (len(sources) - 1) / 2, [_label(v) for v in values])
    ax.set_xlabel(by)
    ax.set_ylabel(chosen.label)
    ax.set_title(f"{chosen.label.split(' (')[0]} per {by}, with 95 % intervals", fontsize=10)
    legend(ax, entries, fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="y", color="0.9")
    return fig


def data_uri(fig: Figure, dpi: int = 110) -> str:
    """The figure as a base64 PNG data URI, for a self-contained HTML page."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
