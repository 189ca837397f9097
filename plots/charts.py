"""Charts over many scored records: the gap profile, makespan against cva, bars with intervals.

Every chart is built from the score rows themselves, so the figures it shows
are the aggregates' (:mod:`peakopt.oracle.aggregate`) and its intervals are the
oracle's seeded bootstrap (:func:`~peakopt.oracle.intervals.mean_interval`).
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

from peakopt.oracle.aggregate import group_rows
from peakopt.oracle.intervals import SEED, mean_interval
from peakopt.oracle.rows import ScoreRow

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


def gap_profile(rows: Sequence[ScoreRow]) -> Figure | None:
    """ECDF (performance profile) of the gap per source: share of pairs within x % of the optimum.

    Unsafe and invalid rows count in each source's total and are never within
    any x (see :data:`PROFILE_NOTE`); None when no row was compared to a reference.
    """
    if not any(r.reference_status is not None or r.gap is not None or r.gap_vs_lb is not None for r in rows):
        return None
    groups = {
        _label(key[0]): [g for g in map(profile_gap, members) if g is not None]
        for key, members in group_rows(rows, ("source",)).items()
    }
    finite = [g for gaps in groups.values() for g in gaps if math.isfinite(g)]
    right = max(1.0, 1.05 * max(finite, default=0.0))
    fig = Figure(figsize=(6.4, 4.0), layout="constrained")
    ax = fig.subplots()
    for index, (source, gaps) in enumerate(groups.items()):
        if not gaps:
            continue
        xs, ys = profile_steps(gaps, right)
        never = sum(not math.isfinite(g) for g in gaps)
        label = f"{source} ({never} of {len(gaps)} unsafe or invalid)" if never else source
        ax.step(
            xs, ys, where="post", color=_colour(index), label=label, linewidth=1.4, gid=f"profile-{source}"
        )
    ax.set_xlim(0, right)
    ax.set_ylim(0, 1.02)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("gap to the optimum, x (%)")
    ax.set_ylabel("pairs within x % of the optimum")
    ax.set_title("Gap profile (unsafe and invalid answers never count as within)", fontsize=10)
    ax.legend(fontsize=7, frameon=False, loc="lower right")
    ax.grid(color="0.92")
    return fig


def makespan_vs_cva(rows: Sequence[ScoreRow]) -> Figure | None:
    """Scatter of makespan against cva, one colour per source; None without valid rows.

    Points are translucent: safe schedules pile up on cva 0, and the pile's
    depth shows.
    """
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
            s=14,
            alpha=0.35,
            color=_colour(index),
            label=_label(key[0]),
            linewidths=0,
        )
    ax.set_xlabel("makespan (s)")
    ax.set_ylabel("capacity violation area (capacity × s)")
    ax.set_title("Makespan against capacity violation", fontsize=10)
    legend = ax.legend(fontsize=7, frameon=False)
    for handle in legend.legend_handles:  # the key shows the colour, not the transparency
        if handle is not None:
            handle.set_alpha(1.0)
    ax.grid(color="0.92")
    return fig


@dataclass(frozen=True)
class BarMetric:
    """A per-row figure whose mean a bar shows: its axis label (with the unit) and its value."""

    label: str
    value: Callable[[ScoreRow], float | None]


#: The bars' metrics, per row as the aggregates count them (invalid rows are unsafe).
BAR_METRICS = {
    "safe_rate": BarMetric("safe schedules (%)", lambda r: 100.0 if r.valid and r.safe else 0.0),
    "mean_gap": BarMetric(
        "mean gap to the optimum (%)",
        lambda r: 100 * r.gap if r.valid and r.safe and r.gap is not None else None,
    ),
}


def group_bars(
    rows: Sequence[ScoreRow], by: str, metric: str = "safe_rate", seed: int = SEED
) -> Figure | None:
    """Bars of the mean of ``metric`` per value of ``by`` (e.g. tier), one colour per source.

    Each bar carries its 95 % bootstrap interval (seeded) as an error bar; a
    group without the figure has no bar (not a bar at 0, which would read as
    a perfect score). None without rows.
    """
    chosen = BAR_METRICS[metric]
    groups = group_rows(rows, ("source", by))
    if not groups:
        return None
    sources = list(dict.fromkeys(key[0] for key in groups))
    values = list(dict.fromkeys(key[1] for key in groups))
    fig = Figure(figsize=(1.8 + 0.9 * len(values) * max(1, len(sources)) ** 0.5, 3.4), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / max(1, len(sources))
    for index, source in enumerate(sources):
        heights, below, above = [], [], []
        for value in values:
            sample = [chosen.value(r) for r in groups.get((source, value), [])]
            kept = [v for v in sample if v is not None]
            mean = float(np.mean(kept)) if kept else math.nan
            interval = mean_interval(kept, seed=seed)
            heights.append(mean)
            below.append(0.0 if interval is None else mean - interval.low)
            above.append(0.0 if interval is None else interval.high - mean)
        positions = np.arange(len(values)) + index * width
        ax.bar(
            positions,
            heights,
            width,
            yerr=[below, above],
            capsize=3,
            error_kw={"elinewidth": 0.8, "ecolor": "0.25"},
            color=_colour(index),
            label=_label(source),
            gid=f"bars-{_label(source)}",
        )
    ax.set_xticks(np.arange(len(values)) + width * (len(sources) - 1) / 2, [_label(v) for v in values])
    ax.set_xlabel(by)
    ax.set_ylabel(chosen.label)
    ax.set_title(f"{chosen.label} per {by}, with 95 % intervals", fontsize=10)
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="y", color="0.9")
    return fig


def data_uri(fig: Figure, dpi: int = 110) -> str:
    """The figure as a base64 PNG data URI, for a self-contained HTML page."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
