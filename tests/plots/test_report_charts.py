"""The report's charts, read back from their matplotlib artists: gap profile, bars with intervals, scatter."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.collections import PathCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from peakopt.oracle.tables.aggregate import aggregate
from peakopt.oracle.tables.intervals import mean_interval
from peakopt.oracle.tables.rows import ScoreRow
from peakopt.plots.charts import gap_profile, group_bars, makespan_vs_cva, profile_steps


def row(
    source: str, gap: float | None = 0.0, *, safe: bool = True, valid: bool = True, **more: object
) -> ScoreRow:
    """A scored answer: safe with ``gap``, unsafe, or invalid (compared to an optimal reference)."""
    fields: dict[str, object] = {
        "source": source,
        "workflow": "w",
        "machine": "m",
        "valid": valid,
        "safe": safe and valid,
        "gap": gap if safe and valid else None,
        "reference_status": "optimal",
        "makespan": 10.0 if valid else None,
        "cva": 0.0 if safe else 1.0,
        "avoidable_cva": 0.0 if safe else 1.0,
    }
    return ScoreRow(**(fields | more))


def line(fig: Figure, source: str) -> Line2D:
    (found,) = [ln for ln in fig.axes[0].get_lines() if ln.get_gid() == f"profile-{source}"]
    return found


def points(ln: Line2D) -> tuple[list[float], list[float]]:
    """A line's x and y values, as floats."""
    return [float(x) for x in np.asarray(ln.get_xdata())], [float(y) for y in np.asarray(ln.get_ydata())]


def test_the_profile_of_a_method_with_an_invalid_answer_never_reaches_one() -> None:
    rows = [row("a", 0.0), row("a", 0.0), row("a", 0.1), row("a", valid=False)]
    rows += [row("b", 0.0), row("b", 0.0), row("b", safe=False)]
    fig = gap_profile(rows)
    assert fig is not None
    a, b = line(fig, "a"), line(fig, "b")
    # a: half the pairs at the optimum, 3/4 within 10 %, the invalid one never
    (a_x, a_y), (_, b_y) = points(a), points(b)
    assert a_x[:2] == [0.0, pytest.approx(10.0)]
    assert a_y == [0.5, 0.75, 0.75]
    assert max(b_y) == pytest.approx(2 / 3)
    assert a.get_drawstyle() == "steps-post"
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["a (1 of 4 unsafe or invalid)", "b (1 of 3 unsafe or invalid)"]
    assert fig.axes[0].get_xlabel() == "gap to the optimum, x (%)"


def test_a_method_at_the_optimum_everywhere_reaches_one_at_zero() -> None:
    fig = gap_profile([row("best"), row("best")])
    assert fig is not None
    best = line(fig, "best")
    assert (best.get_xdata()[0], best.get_ydata()[0]) == (0.0, 1.0)


def test_no_profile_without_references() -> None:
    bare = [row("a", None, reference_status=None), row("a", safe=False, reference_status=None)]
    assert gap_profile(bare) is None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.floats(min_value=0, max_value=3, allow_nan=False),
            st.sampled_from(["unsafe", "invalid"]),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_the_profile_is_the_share_within_each_x(answers: list[float | str]) -> None:
    gaps = [100 * a if isinstance(a, float) else math.inf for a in answers]
    xs, ys = profile_steps(gaps, 400.0)
    assert xs[0] == 0.0 and xs[-1] == 400.0
    assert all(x1 <= x2 for x1, x2 in itertools.pairwise(xs))
    assert all(y1 <= y2 for y1, y2 in itertools.pairwise(ys))
    for x, y in zip(xs, ys, strict=True):
        assert y == pytest.approx(sum(g <= x for g in gaps) / len(gaps))
    assert ys[-1] == pytest.approx(sum(isinstance(a, float) for a in answers) / len(answers))


def bar_containers(fig: Figure) -> dict[str, BarContainer]:
    containers = [c for c in fig.axes[0].containers if isinstance(c, BarContainer)]
    return {str(c.get_label()): c for c in containers}


def error_spans(fig: Figure, index: int) -> list[tuple[float, float]]:
    """The low and high end of each error bar of the ``index``-th source."""
    errorbars = [c for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer)]
    segments = errorbars[index].lines[2][0].get_segments()
    return [(float(s[0][1]), float(s[1][1])) for s in segments]


# each answer on a pair of its own: the intervals resample pairs (a pair's answers averaged first)
TIERED = [
    r.model_copy(update={"workflow": f"w{i}"})
    for i, r in enumerate(
        [
            row("a", 0.0, tier="easy"),
            row("a", 0.2, tier="easy"),
            row("a", safe=False, tier="easy"),
            row("a", 0.1, tier="hard"),
            row("a", valid=False, tier="hard"),
            row("b", safe=False, tier="easy"),
            row("b", safe=False, tier="hard"),
        ]
    )
]


def test_safe_rate_bars_are_the_summaries_with_their_intervals() -> None:
    fig = group_bars(TIERED, "tier", "safe_rate")
    assert fig is not None
    summaries = {(s.group["source"], s.group["tier"]): s for s in aggregate(TIERED, ("source", "tier"))}
    bars = bar_containers(fig)
    heights = [p.get_height() for p in bars["a"].patches]
    assert heights == pytest.approx([100 * summaries["a", t].safe_rate for t in ("easy", "hard")])
    interval = mean_interval([1.0, 1.0, 0.0])  # a's easy rows: safe, safe, unsafe
    assert interval is not None
    assert error_spans(fig, 0)[0] == pytest.approx((100 * interval.low, 100 * interval.high))
    assert [p.get_height() for p in bars["b"].patches] == [0.0, 0.0]  # a real 0: nothing safe
    assert fig.axes[0].get_ylabel() == "safe schedules (%)" and fig.axes[0].get_xlabel() == "tier"


def test_mean_gap_bars_leave_out_groups_without_a_gap() -> None:
    fig = group_bars(TIERED, "tier", "mean_gap")
    assert fig is not None
    bars = bar_containers(fig)
    assert [p.get_height() for p in bars["a"].patches] == pytest.approx([10.0, 10.0])
    # b has no safe answer: no bar, rather than a bar at 0 that reads as optimal
    assert all(math.isnan(p.get_height()) for p in bars["b"].patches)
    interval = mean_interval([0.0, 0.2])
    assert interval is not None
    low, high = error_spans(fig, 0)[0]
    assert (low, high) == pytest.approx((100 * interval.low, 100 * interval.high))
    # one value: no interval, the error bar has no length
    assert error_spans(fig, 0)[1] == pytest.approx((10.0, 10.0))
    assert fig.axes[0].get_ylabel() == "mean gap to the optimum (%)"


def test_efficiency_bars_count_unsafe_answers_as_zero() -> None:
    rows = [
        row("a", 0.25, efficiency=0.8, tier="easy", workflow="w0"),
        row("a", 0.0, efficiency=1.0, tier="easy", workflow="w1"),
        row("a", safe=False, efficiency=0.0, tier="easy", workflow="w2"),
    ]
    fig = group_bars(rows, "tier", "efficiency")
    assert fig is not None
    assert [p.get_height() for p in bar_containers(fig)["a"].patches] == pytest.approx([0.6])
    interval = mean_interval([0.8, 1.0, 0.0])
    assert interval is not None
    assert error_spans(fig, 0)[0] == pytest.approx((interval.low, interval.high))
    assert fig.axes[0].get_ylabel().startswith("efficiency")
    # no proven optimum anywhere: no efficiency, no chart
    assert group_bars([row("a", None, tier="easy")], "tier", "efficiency") is None


def test_scatter_points_are_translucent() -> None:
    fig = makespan_vs_cva([row("a"), row("a", safe=False), row("b")])
    assert fig is not None
    collections = [c for c in fig.axes[0].collections if isinstance(c, PathCollection)]
    assert len(collections) == 2
    assert all(c.get_alpha() is not None and c.get_alpha() < 0.6 for c in collections)
    assert np.asarray(collections[0].get_offsets()).tolist() == [[10.0, 0.0], [10.0, 1.0]]
    assert "(s)" in fig.axes[0].get_xlabel() and "capacity" in fig.axes[0].get_ylabel()
