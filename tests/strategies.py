"""Hypothesis strategies for random valid workflows, machines and schedules."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from peakopt.models import Machine, Schedule, Segment, Task, Varies, Workflow

RESOURCES = ("cpu", "memory_mb")


def amounts(integer: bool, high: float) -> st.SearchStrategy[float]:
    """Non-negative amounts: small integers, or arbitrary finite floats."""
    if integer:
        return st.integers(min_value=0, max_value=int(high)).map(float)
    return st.floats(min_value=0, max_value=high, allow_nan=False, allow_infinity=False)


@st.composite
def segments(draw: st.DrawFn, resources: tuple[str, ...], integer: bool) -> Segment:
    """One constant-usage segment."""
    demand = {r: draw(amounts(integer, 10)) for r in resources if draw(st.booleans())}
    return Segment(duration=draw(amounts(integer, 8)), demand=demand)


@st.composite
def workflows(
    draw: st.DrawFn,
    min_tasks: int = 1,
    max_tasks: int = 8,
    resources: tuple[str, ...] = RESOURCES,
    integer: bool = False,
    piecewise: bool = True,
) -> Workflow:
    """A random DAG; edges go from lower to higher positions, so never a cycle."""
    count = draw(st.integers(min_value=min_tasks, max_value=max_tasks))
    tasks = []
    for i in range(count):
        preds = [f"t{j}" for j in range(i) if draw(st.integers(0, 3)) == 0]
        fields: dict[str, Any] = {"id": f"t{i}", "depends_on": preds}
        if draw(st.booleans()):
            fields["call"] = call(draw(st.lists(st.sampled_from(preds), unique=True)) if preds else [])
        if piecewise and draw(st.integers(0, 3)) == 0:
            fields["profile"] = draw(st.lists(segments(resources, integer), min_size=1, max_size=3))
        else:
            seg = draw(segments(resources, integer))
            fields.update(duration=seg.duration, demand=seg.demand)
        tasks.append(Task(**fields))
    order = draw(st.permutations(tasks))  # task order in the file is not topological
    request = draw(st.one_of(st.none(), st.text(max_size=40)))
    return Workflow(id="w", request=request, tasks=order)


def call(inputs: list[str]) -> str:
    """A tool call whose arguments are the outputs of the steps ``inputs`` (some of the predecessors)."""
    return "tool(" + ", ".join(f"x{k}=${step}.output" for k, step in enumerate(inputs)) + ")"


@st.composite
def machines(draw: st.DrawFn, resources: tuple[str, ...] = RESOURCES, integer: bool = False) -> Machine:
    """A machine limiting some or all of ``resources`` (capacities in [1, 12])."""
    if integer:
        value: st.SearchStrategy[float] = st.integers(1, 12).map(float)
    else:
        value = st.floats(min_value=0.5, max_value=12, allow_nan=False)
    limited = draw(st.lists(st.sampled_from(resources), unique=True, min_size=1))
    return Machine(name="m", capacity={r: draw(value) for r in limited})


@st.composite
def schedules(draw: st.DrawFn, workflow: Workflow, integer: bool = False) -> Schedule:
    """Arbitrary start times (not necessarily dependency-valid)."""
    starts = {t.id: draw(amounts(integer, 20)) for t in workflow.tasks}
    return Schedule(workflow=workflow.id, machine="m", starts=starts)


def _percentiles(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """Ordered p10 <= p50 <= p90 a lognormal takes (p10 > 0)."""
    value = st.floats(min_value=0.01, max_value=50, allow_nan=False)
    return (
        st.lists(value, min_size=3, max_size=3)
        .map(sorted)
        .map(lambda p: {"kind": kind, "p10": p[0], "p50": p[1], "p90": p[2]})
    )


def _triangular() -> st.SearchStrategy[dict[str, Any]]:
    """Percentiles of a triangle that starts at or above 0: a width, a median share, a mode.

    The width is 0 (a fixed value) or at least 1e-3: a width of a few ulps rounds the median onto
    p10, which the model rightly refuses (hypothesis found p10=p50=10, p90=10+5e-15).
    """
    width = st.one_of(st.just(0.0), st.floats(min_value=1e-3, max_value=1))
    return st.tuples(st.floats(min_value=0, max_value=20), width, st.floats(0.4, 0.6)).map(
        lambda t: {
            "kind": "triangular",
            "p10": 10 + t[0],
            "p50": 10 + t[0] + t[2] * t[1],
            "p90": 10 + t[0] + t[1],
        }
    )


def distributions() -> st.SearchStrategy[dict[str, Any]]:
    """Any valid distribution of a ``varies`` field, as its JSON."""
    return st.one_of(
        st.floats(min_value=0, max_value=0.99).map(lambda x: {"kind": "uniform", "spread": x}),
        _percentiles("lognormal"),
        _triangular(),
        st.lists(st.floats(min_value=0, max_value=50), min_size=1, max_size=5).map(
            lambda s: {"kind": "empirical", "samples": s}
        ),
    )


@st.composite
def varies(draw: st.DrawFn) -> dict[str, Any]:
    """A valid ``varies`` field (a duration distribution, a demand one, or both), as its JSON."""
    fields = {k: draw(distributions()) for k in ("duration", "demand") if draw(st.booleans())}
    return fields or {"duration": draw(distributions())}


@st.composite
def varying_workflows(draw: st.DrawFn, /, **options: Any) -> Workflow:
    """A random workflow (:func:`workflows`) where some tasks say how they vary."""
    workflow = draw(workflows(**options))
    tasks = [
        t.model_copy(update={"varies": Varies.model_validate(draw(varies()))}) if draw(st.booleans()) else t
        for t in workflow.tasks
    ]
    return workflow.model_copy(update={"tasks": tuple(tasks)})
