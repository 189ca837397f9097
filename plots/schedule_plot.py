"""Gantt chart above one load panel per resource, for one or several schedules.

Several schedules of the same workflow are drawn side by side on one time
axis, so the staggering that keeps a machine safe is visible at a glance.
"""

from __future__ import annotations

import colorsys
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.colors import to_hex, to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.typing import ColorType

from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle import Score, load_profile, runs
from peakopt.oracle.base.exact import before
from peakopt.plots.columns import gap_cell
from peakopt.plots.literal import literal

AVOIDABLE = "#d62728"
UNAVOIDABLE = "#ff9f1c"
#: Colours that mean overload (and broken dependencies): no task bar is ever drawn in one of them.
RESERVED = (AVOIDABLE, UNAVOIDABLE)
LOAD = "#4c78a8"
MAX_LABELS = 40
#: Every step is drawn at least this wide (in points), so a 0.01 s step in a 1000 s schedule shows.
MIN_WIDTH_POINTS = 1.5
#: Formats a picture is written in, by the file's extension.
PICTURE_SUFFIXES = (".png", ".svg", ".pdf")
# Hues closer than this to a reserved colour's read as overload, however pale.
_HUE_APART = 20.0
_COLUMN_INCHES = 4.6  # each schedule's column in the figure; its axes are a little narrower
_AXES_SHARE = 0.8


@dataclass(frozen=True)
class Drawn:
    """One schedule to draw, with the oracle's score and, if known, its gap to optimum.

    ``compared`` says that a reference was known: the title then gives the gap,
    or why there is none (``unsafe``).
    """

    label: str
    schedule: Schedule
    score: Score
    gap: float | None = None
    compared: bool = False


def task_order(workflow: Workflow) -> list[Task]:
    """Tasks top to bottom: by dependency layer, then as listed."""
    layer = {t: i for i, gen in enumerate(nx.topological_generations(workflow.graph)) for t in gen}
    return sorted(workflow.tasks, key=lambda t: (layer[t.id], workflow.index[t.id]))


def _hue(colour: ColorType) -> tuple[float, float]:
    """Hue in degrees and HLS saturation."""
    hue, _, saturation = colorsys.rgb_to_hls(*to_rgb(colour))
    return 360 * hue, saturation


def looks_reserved(colour: ColorType) -> bool:
    """Whether ``colour`` could be taken for one of :data:`RESERVED` (a red or orange; greys never)."""
    hue, saturation = _hue(colour)
    if saturation < 0.2:
        return False
    for reserved in RESERVED:
        apart = abs(hue - _hue(reserved)[0]) % 360
        if min(apart, 360 - apart) < _HUE_APART:
            return True
    return False


def task_palette() -> list[str]:
    """Soft colours for task bars, without any that could be read as overload.

    Set3 and Pastel2 hold a salmon and several oranges: they are left out,
    so the saturated red and orange of the load panels mean overload only.
    """
    soft = colormaps["Set3"].colors + colormaps["Pastel2"].colors  # type: ignore[attr-defined]
    kept = [to_hex(c) for c in soft if not looks_reserved(c)]
    return list(dict.fromkeys(kept))


def colour_key(task: Task, machine: Machine, by: str) -> str:
    """What a bar's colour stands for: the tool's server, or the task's resource class."""
    if by == "tool":
        return task.server or task.tool or "task"
    if "resource_class" in task.meta:
        return str(task.meta["resource_class"])
    ratios = {r: task.peak(r) / c for r, c in machine.capacity.items()}
    heaviest = max(ratios, key=lambda r: ratios[r], default="none")
    return f"{heaviest}-heavy" if ratios.get(heaviest, 0) > 0 else "light"


def _title(drawn: Drawn) -> str:
    s = drawn.score
    mru = "-" if s.strict_mru is None else f"{s.strict_mru:.3f}"  # undefined at makespan 0
    parts = [f"makespan {s.makespan:.2f} s", f"cva {s.cva:.3f}", f"strict MRU {mru}"]
    if drawn.gap is not None or drawn.compared:
        parts.append("gap " + gap_cell(drawn.gap, s.safe, s.valid))
    state = "safe" if s.safe else ("unsafe" if s.valid else "invalid")
    return f"{drawn.label} ({state})\n" + " · ".join(parts)


def _gantt(
    ax: Axes,
    workflow: Workflow,
    order: list[Task],
    drawn: Drawn,
    colours: dict[str, str],
    keys: dict[str, str],
    dependencies: bool,
    least: float,
) -> None:
    starts = drawn.schedule.starts
    row = {t.id: i for i, t in enumerate(order)}
    for task in order:
        if task.id not in starts:
            continue
        offset = starts[task.id]
        for index, segment in enumerate(task.segments):
            ax.barh(
                row[task.id],
                max(segment.duration, least),  # a step shorter than a line's width still shows
                left=offset,
                height=0.7,
                color=colours[keys[task.id]],
                # no white edge on a sliver: it would paint over the whole bar
                edgecolor="white" if segment.duration > 4 * least else "none",
                linewidth=0.4,
                gid=f"task-{task.id}-{index}",
            )
            offset += segment.duration
    for pred, succ in workflow.edges:
        if pred not in starts or succ not in starts:
            continue
        end = starts[pred] + workflow.task(pred).length
        broken = before(starts[succ], end)  # the oracle's rule: not just float noise
        if dependencies or broken:
            ax.annotate(
                "",
                xy=(starts[succ], row[succ]),
                xytext=(end, row[pred]),
                arrowprops={"arrowstyle": "->", "lw": 0.6, "color": AVOIDABLE if broken else "0.45"},
            )
    _task_labels(ax, order)


def _task_labels(ax: Axes, order: list[Task]) -> None:
    step = max(1, math.ceil(len(order) / MAX_LABELS))  # thin labels out on long workflows
    ticks = list(range(0, len(order), step))
    ax.set_yticks(ticks, [order[i].id for i in ticks], fontsize=7 if len(order) > 15 else 8)
    ax.set_ylim(len(order) - 0.4, -0.6)
    ax.grid(axis="x", color="0.9", linewidth=0.5)


def _load(ax: Axes, workflow: Workflow, drawn: Drawn, resource: str, capacity: float) -> float:
    """Draw the load of ``resource`` against its capacity; return the peak load."""
    pieces = load_profile(runs(workflow, drawn.schedule.starts, resource))
    xs = [x for p in pieces for x in (p.start, p.end)]
    ys = [p.load for p in pieces for _ in (0, 1)]
    ax.fill_between(xs, ys, color=LOAD, alpha=0.35, linewidth=0)
    ax.plot(xs, ys, color=LOAD, linewidth=0.8)
    for piece in pieces:
        if piece.load <= capacity * (1 + 1e-9):
            continue
        alone = sum(max(0.0, a - capacity) for a in piece.active.values())
        span = [piece.start, piece.end]
        ax.fill_between(
            span,
            capacity,
            capacity + alone,
            color=UNAVOIDABLE,
            hatch="///",
            linewidth=0,
            gid=f"overflow-unavoidable-{resource}",
        )
        ax.fill_between(
            span,
            capacity + alone,
            piece.load,
            color=AVOIDABLE,
            alpha=0.8,
            linewidth=0,
            gid=f"overflow-avoidable-{resource}",
        )
    ax.axhline(capacity, color="black", linestyle="--", linewidth=0.9)
    ax.set_ylabel(resource, fontsize=8)
    ax.grid(axis="x", color="0.9", linewidth=0.5)
    return max(ys, default=0.0)


@literal
def figure(
    workflow: Workflow,
    machine: Machine,
    drawn: Sequence[Drawn],
    *,
    dependencies: bool = False,
    colour_by: str = "tool",
) -> Figure:
    """Gantt charts above load-against-capacity panels, one column per schedule.

    Parameters
    ----------
    workflow, machine
        The instance every schedule belongs to.
    drawn
        The schedules, drawn left to right on one shared time axis.
    dependencies
        Draw every dependency arrow (broken ones are always drawn, in red).
    colour_by
        ``tool`` (the tool's server) or ``class`` (the resource class).

    Returns
    -------
    Figure
        The figure; save it with :func:`save_figure`.
    """
    if not drawn:
        raise ValueError("nothing to draw")
    order = task_order(workflow)
    keys = {t.id: colour_key(t, machine, colour_by) for t in order}
    palette = task_palette()
    colours = {k: palette[i % len(palette)] for i, k in enumerate(sorted(set(keys.values())))}
    resources = list(machine.capacity)
    gantt_height = min(14.0, max(2.0, 0.22 * len(order)))
    # a bare Figure, not pyplot: no global state, safe in libraries and workers
    fig = Figure(
        figsize=(1.5 + _COLUMN_INCHES * len(drawn), 1.2 + gantt_height + 1.5 * len(resources)),
        layout="constrained",
    )
    axes = fig.subplots(
        1 + len(resources),
        len(drawn),
        sharex=True,
        sharey="row",
        squeeze=False,
        gridspec_kw={"height_ratios": [gantt_height] + [1.5] * len(resources)},
    )
    tops = dict(machine.capacity)
    least = min_width(workflow, drawn)
    for column, item in enumerate(drawn):
        _gantt(axes[0][column], workflow, order, item, colours, keys, dependencies, least)
        axes[0][column].set_title(_title(item), fontsize=9)
        for row, resource in enumerate(resources, start=1):
            peak = _load(axes[row][column], workflow, item, resource, machine.capacity[resource])
            tops[resource] = max(tops[resource], peak)
        axes[-1][column].set_xlabel("time (s)")
    for row, resource in enumerate(resources, start=1):
        axes[row][0].set_ylim(0, tops[resource] * 1.08)  # rows share y: one call sets the row
    _legend(fig, colours, overload=any(d.score.cva > 0 for d in drawn))
    fig.suptitle(f"{workflow.id} on {machine.name}", fontsize=11)
    return fig


def min_width(workflow: Workflow, drawn: Sequence[Drawn]) -> float:
    """:data:`MIN_WIDTH_POINTS` in seconds on the shared time axis of ``drawn``.

    The axis spans the latest finish of any schedule drawn, across a column of
    about ``_AXES_SHARE`` of ``_COLUMN_INCHES``; computed before drawing, as the
    bars need it (the layout only moves the axes a little).
    """
    horizon = max(
        (
            start + workflow.task(task).length
            for d in drawn
            for task, start in d.schedule.starts.items()
            if task in workflow.index
        ),
        default=0.0,
    )
    return horizon * MIN_WIDTH_POINTS / 72 / (_COLUMN_INCHES * _AXES_SHARE)


def _legend(fig: Figure, colours: dict[str, str], overload: bool) -> None:
    handles = [Patch(color=c, label=k) for k, c in list(colours.items())[:12]]
    if overload:
        handles += [
            Patch(color=UNAVOIDABLE, hatch="///", label="unavoidable overload"),
            Patch(color=AVOIDABLE, label="avoidable overload"),
        ]
    fig.legend(
        handles=handles, loc="outside lower center", ncol=min(7, len(handles)), fontsize=7, frameon=False
    )


def save_figure(fig: Figure, path: str | Path) -> None:
    """Write ``fig`` as PNG, SVG or PDF (matplotlib's pdf backend: vector, for papers), by the extension."""
    target = Path(path)
    if target.suffix.lower() not in PICTURE_SUFFIXES:
        raise ValueError(f"plots are written as .png, .svg or .pdf, not {target.suffix or 'no extension'}")
    fig.savefig(target, dpi=130, bbox_inches="tight")
