"""Large instances: layered agent DAGs and random RCPSP instances."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from peakopt.instances.large import LargeSpec, asap_peak, earliest_starts, large_suite, layered, rcpsp
from peakopt.models import Schedule, Workflow
from peakopt.oracle import evaluate


def depths(workflow: Workflow) -> dict[str, int]:
    depth: dict[str, int] = {}
    for task in workflow.tasks:  # generated in topological order
        depth[task.id] = 1 + max((depth[p] for p in task.depends_on), default=-1)
    return depth


def test_layered_shape_follows_width() -> None:
    workflow = layered(LargeSpec(tasks=500, width=20, seed=3))
    assert len(workflow.tasks) == 500
    depth = depths(workflow)
    sizes = [list(depth.values()).count(d) for d in range(max(depth.values()) + 1)]
    assert len(sizes) == workflow.meta["layers"]
    assert all(10 <= s <= 30 for s in sizes[:-1]) and 1 <= sizes[-1] <= 30
    last = max(depth.values())
    fed = {p for t in workflow.tasks for p in t.depends_on}
    for task in workflow.tasks:
        assert all(depth[p] == depth[task.id] - 1 for p in task.depends_on)
        assert task.depends_on or depth[task.id] == 0
        assert depth[task.id] == last or task.id in fed


@pytest.mark.parametrize(
    ("count", "names"), [(1, {"cpu"}), (2, {"cpu", "memory_mb"}), (4, {"cpu", "memory_mb", "R3", "R4"})]
)
def test_layered_resources(count: int, names: set[str]) -> None:
    assert layered(LargeSpec(tasks=300, resources=count)).resources == names


def test_rcpsp_parameters() -> None:
    spec = LargeSpec(kind="rcpsp", tasks=200, complexity=1.5, resources=3, factor=0.4, seed=5)
    workflow = rcpsp(spec)
    assert len(workflow.tasks) == 200
    assert len(workflow.edges) == 300
    assert workflow.resources == {"R1", "R2", "R3"}
    uses = [len(t.demand or {}) for t in workflow.tasks]
    assert min(uses) >= 1 and 0.3 < sum(uses) / (3 * 200) < 0.55
    for task in workflow.tasks:
        assert task.duration is not None and task.duration.is_integer() and 1 <= task.duration <= 10
        assert all(v.is_integer() and 1 <= v <= 10 for v in (task.demand or {}).values())
    span = spec.span
    assert all(0 < int(t.id) - int(p) <= span for t in workflow.tasks for p in t.depends_on)


@settings(max_examples=25)
@given(st.sampled_from(["layered", "rcpsp"]), st.integers(1, 60), st.integers(0, 1000))
# found by hypothesis: a step ends at a float sum a hair after its successor starts
@example("layered", 41, 107)
def test_strength_bounds_match_the_oracle(kind: str, tasks: int, seed: int) -> None:
    base = LargeSpec(kind=kind, tasks=tasks, seed=seed)
    workflow = layered(base) if kind == "layered" else rcpsp(base)
    asap = Schedule(
        workflow=workflow.id,
        starts={t.id: float(s) for t, s in zip(workflow.tasks, earliest_starts(workflow), strict=True)},
    )
    tightest = large_suite(LargeSpec(kind=kind, tasks=tasks, seed=seed, strength=0.0)).machines[0]
    loosest = large_suite(LargeSpec(kind=kind, tasks=tasks, seed=seed, strength=1.0)).machines[0]
    score = evaluate(workflow, loosest, asap)
    assert score.valid and score.cva == 0  # strength 1 never delays ASAP
    for resource, capacity in tightest.capacity.items():
        biggest = max(t.peak(resource) for t in workflow.tasks)
        assert biggest <= capacity < biggest + 0.01 + 1e-9  # strength 0: the largest single demand
        assert score.resources[resource].peak == pytest.approx(asap_peak(workflow, resource))


def test_strength_interpolates() -> None:
    spec = LargeSpec(kind="rcpsp", tasks=60, seed=1)
    workflow = rcpsp(spec)
    machine = large_suite(LargeSpec(kind="rcpsp", tasks=60, seed=1, strength=0.5)).machines[0]
    for resource, capacity in machine.capacity.items():
        r_min = max(t.peak(resource) for t in workflow.tasks)
        r_max = asap_peak(workflow, resource)
        assert capacity == pytest.approx(r_min + 0.5 * (r_max - r_min), abs=1.0)
    assert machine.name == "rs-0.5" and machine.meta == {"resource_strength": 0.5}


def test_large_is_deterministic() -> None:
    spec = LargeSpec(kind="layered", tasks=120, seed=9)
    assert large_suite(spec) == large_suite(spec)
    assert large_suite(spec).workflows != large_suite(LargeSpec(kind="layered", tasks=120, seed=10)).workflows


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind": "grid"}, "kind"),
        ({"tasks": 0}, "tasks"),
        ({"width": 0}, "width"),
        ({"resources": 0}, "resources"),
        ({"strength": 1.5}, "strength"),
        ({"complexity": -1}, "complexity"),
        ({"factor": 0}, "factor"),
    ],
)
def test_bad_large_specs(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LargeSpec(**fields)  # type: ignore[arg-type]
