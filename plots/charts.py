"""Charts over many scored records: gap distributions, makespan vs cva, bars per group."""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from peakopt.oracle.aggregate import ScoreSummary, group_rows
from peakopt.oracle.rows import ScoreRow


def _colour(index: int) -> tuple[float, ...]:
    colours: tuple[tuple[float, ...], ...] = colormaps["tab10"].colors  # type: ignore[attr-defined]
    return colours[index % len(colours)]


def _label(value: str | None) -> str:
    return value if value is not None else "(none)"


def gap_distribution(rows: Sequence[ScoreRow]) -> Figure | None:
    """Box plot of the gap to the proven optimum per source, over safe rows; None without gaps."""
    groups = {
        _label(key[0]): [r.gap for r in members if r.safe and r.gap is not None]
        for key, members in group_rows(rows, ("source",)).items()
    }
    groups = {k: v for k, v in groups.items() if v}
    if not groups:
        return None
    fig = Figure(figsize=(1.6 + 1.1 * len(groups), 3.6), layout="constrained")
    ax = fig.subplots()
    data = [100 * np.asarray(v, dtype=float) for v in groups.values()]
    ax.boxplot(data, showfliers=True, flierprops={"markersize": 3})
    ax.set_xticks(range(1, len(groups) + 1), list(groups), rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("gap to optimum (%)")
    ax.set_title("Gap to the proven optimum (safe schedules)", fontsize=10)
    ax.grid(axis="y", color="0.9")
    return fig


def makespan_vs_cva(rows: Sequence[ScoreRow]) -> Figure | None:
    """Scatter of makespan against cva, one colour per source; None without valid rows."""
    groups = group_rows([r for r in rows if r.valid and r.makespan is not None], ("source",))
    if not groups:
        return None
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.subplots()
    for index, (key, members) in enumerate(groups.items()):
        points = np.array([(r.makespan, r.cva) for r in members], dtype=float)
        ax.scatter(
            points[:, 0],
            points[:, 1],
            s=10,
            alpha=0.6,
            color=_colour(index),
            label=_label(key[0]),
            linewidths=0,
        )
    ax.set_xlabel("makespan (s)")
    ax.set_ylabel("capacity violation area (cva)")
    ax.set_title("Makespan against capacity violation", fontsize=10)
    ax.legend(fontsize=7, frameon=False)
    ax.grid(color="0.92")
    return fig


def group_bars(summaries: Sequence[ScoreSummary], by: str, metric: str = "safe_rate") -> Figure | None:
    """Grouped bars of ``metric`` per value of ``by`` (e.g. tier), one bar colour per source."""
    sources = list(dict.fromkeys(s.group.get("source") for s in summaries))
    values = list(dict.fromkeys(s.group.get(by) for s in summaries))
    if not summaries or not values:
        return None
    fig = Figure(figsize=(1.8 + 0.9 * len(values) * max(1, len(sources)) ** 0.5, 3.4), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / max(1, len(sources))
    lookup = {(s.group.get("source"), s.group.get(by)): s for s in summaries}
    for index, source in enumerate(sources):
        heights = [_metric(lookup.get((source, value)), metric) for value in values]
        positions = np.arange(len(values)) + index * width
        ax.bar(positions, heights, width, color=_colour(index), label=_label(source))
    ax.set_xticks(np.arange(len(values)) + width * (len(sources) - 1) / 2, [_label(v) for v in values])
    ax.set_ylabel(metric.replace("_", " "))
    ax.set_title(f"{metric.replace('_', ' ')} per {by}", fontsize=10)
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="y", color="0.9")
    return fig


def _metric(summary: ScoreSummary | None, metric: str) -> float:
    if summary is None:
        return 0.0
    if metric == "mean_gap":
        return 100 * summary.gap.mean if summary.gap else 0.0
    value = getattr(summary, metric)
    return float(value) if value is not None else 0.0


def data_uri(fig: Figure, dpi: int = 110) -> str:
    """The figure as a base64 PNG data URI, for a self-contained HTML page."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
