"""The suite generator and the bundled default suite."""

from __future__ import annotations

import math
from collections import Counter
from functools import cache, partial

import numpy as np
import pytest

from peakopt.instances import bundled, load
from peakopt.instances import generator as gen
from peakopt.instances.catalog import default_catalog
from peakopt.instances.compact import compact_json
from peakopt.instances.draws import Draws
from peakopt.instances.generator import TIERS, SuiteSpec, generate_suite, layer_widths, place
from peakopt.instances.machines import PROFILE_RULE, earliest_layer, earliest_layer_demand, machine_profiles
from peakopt.models import Suite, Task, Workflow


@cache
def default() -> Suite:
    return generate_suite()


@pytest.mark.slow
def test_bundled_default_is_the_seed_0_suite_byte_for_byte() -> None:
    assert compact_json(default()) == bundled("default").read_text(encoding="utf-8")
    assert load("bundled:default") == default()


def test_tier_sizes() -> None:
    suite = default()
    assert Counter(w.meta["tier"] for w in suite.workflows) == {"easy": 150, "medium": 100, "hard": 50}
    for workflow in suite.workflows:
        tier = TIERS[workflow.meta["tier"]]
        assert workflow.id.startswith(tier.name + "-")
        assert tier.calls[0] <= len(workflow.tasks) <= tier.calls[1], workflow.id
        assert all(t.server is not None for t in workflow.tasks), workflow.id  # every call names one
        servers = {t.server for t in workflow.tasks if t.server is not None}
        assert tier.servers[0] <= len(servers) <= tier.servers[1], workflow.id
        assert workflow.meta["shape"] in tier.shapes
        assert any(default_catalog().server_category(s) == workflow.meta["theme"] for s in servers)


def test_every_workflow_revalidates_and_uses_catalog_tools() -> None:
    names = {a.name for a in default_catalog().archetypes}
    for workflow in default().workflows:
        assert Workflow.model_validate(workflow.model_dump()) == workflow
        assert all(t.tool in names and t.tool.startswith(f"{t.server}.") for t in workflow.tasks)


def test_figures_are_rounded_to_exact_units() -> None:
    def on_grid(value: float, step: float) -> bool:
        return math.isclose(round(value / step) * step, value, abs_tol=1e-9)

    for workflow in default().workflows:
        for task in workflow.tasks:
            for segment in task.segments:
                assert segment.duration >= 0.01 and on_grid(segment.duration, 0.01)
                assert segment.demand["cpu"] >= 0.01 and on_grid(segment.demand["cpu"], 0.01)
                assert segment.demand["memory_mb"] >= 1 and float(segment.demand["memory_mb"]).is_integer()
            assert task.meta["cpu_avg_cores"] <= task.peak("cpu")


def test_same_seed_same_suite_other_seed_other_suite() -> None:
    spec = SuiteSpec(seed=3, counts={"easy": 5, "medium": 3, "hard": 2})
    assert generate_suite(spec) == generate_suite(spec)
    other = generate_suite(SuiteSpec(seed=4, counts={"easy": 5, "medium": 3, "hard": 2}))
    assert other.workflows != generate_suite(spec).workflows


def test_machine_rule_from_the_pools() -> None:
    suite = default()
    steps = {r: [t.peak(r) for w in suite.workflows for t in w.tasks] for r in ("cpu", "memory_mb")}
    layers = {
        r: [sum(t.peak(r) for t in w.tasks if not t.depends_on) for w in suite.workflows]
        for r in ("cpu", "memory_mb")
    }
    assert [m.name for m in suite.machines] == ["small", "medium", "large"]
    for machine in suite.machines:
        step_q, layer_q = PROFILE_RULE[machine.name]
        for resource, capacity in machine.capacity.items():
            exact = max(np.percentile(steps[resource], step_q), np.percentile(layers[resource], layer_q))
            unit = 1 if resource == "memory_mb" else 0.01
            assert exact <= capacity < exact + unit + 1e-9, (machine.name, resource)
    small, medium, large = suite.machines
    for resource in small.capacity:
        assert small.capacity[resource] <= medium.capacity[resource] <= large.capacity[resource]


def test_earliest_layer_is_the_tasks_without_predecessors() -> None:
    workflow = Workflow(
        id="w",
        tasks=(
            Task(id="a", duration=1, demand={"cpu": 1, "memory_mb": 100}),
            Task(id="b", duration=1, demand={"cpu": 2}),
            Task(id="c", depends_on=("a",), duration=1, demand={"cpu": 8, "memory_mb": 900}),
            Task(
                id="d",
                profile=(
                    {"duration": 1, "demand": {"cpu": 0.5, "memory_mb": 300}},
                    {"duration": 2, "demand": {"cpu": 0.25, "memory_mb": 50}},
                ),
            ),
        ),
    )
    assert earliest_layer(workflow) == ["a", "b", "d"]
    assert earliest_layer_demand(workflow, "cpu") == 3.5
    assert earliest_layer_demand(workflow, "memory_mb") == 400
    (machine,) = machine_profiles([workflow], {"only": (50, 50)})
    # steps: cpu 1, 2, 8, 0.5 -> median 1.5; one earliest layer of 3.5
    assert machine.capacity == {"cpu": 3.5, "memory_mb": 400}


def test_machine_profiles_need_workflows() -> None:
    with pytest.raises(ValueError, match="at least one workflow"):
        machine_profiles([])


def test_piecewise_calls_spike_first() -> None:
    suite = generate_suite(SuiteSpec(seed=1, counts={"easy": 40, "medium": 20}, piecewise=1.0))
    pieces = [t for w in suite.workflows for t in w.tasks if t.profile is not None]
    assert pieces
    for task in pieces:
        spike, steady = task.profile or ()
        assert spike.demand["cpu"] >= steady.demand["cpu"]
        assert spike.demand["memory_mb"] > steady.demand["memory_mb"]
        assert math.isclose(task.length, spike.duration + steady.duration)
        archetype = next(a for a in default_catalog().archetypes if a.name == task.tool)
        assert archetype.startup is not None
    constant = [t for w in suite.workflows for t in w.tasks if t.profile is None]
    startups = {a.name for a in default_catalog().archetypes if a.startup}
    assert all(t.tool not in startups for t in constant)


def test_without_noise_a_tool_always_costs_the_same() -> None:
    suite = generate_suite(SuiteSpec(seed=2, counts={"hard": 20}, noise=0.0))
    profiles: dict[str, set[tuple[float, ...]]] = {}
    for task in (t for w in suite.workflows for t in w.tasks):
        figures = (task.length, task.peak("cpu"), task.peak("memory_mb"), task.meta["cpu_avg_cores"])
        profiles.setdefault(task.tool or "", set()).add(figures)
    assert all(len(seen) == 1 for seen in profiles.values())
    assert any(len(seen) > 1 for seen in _profiles(generate_suite(SuiteSpec(seed=2, counts={"hard": 20}))))


def _profiles(suite: Suite) -> list[set[float]]:
    seen: dict[str, set[float]] = {}
    for task in (t for w in suite.workflows for t in w.tasks):
        seen.setdefault(task.tool or "", set()).add(task.length)
    return list(seen.values())


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"counts": {"extreme": 1}}, "unknown tier"),
        ({"counts": {"easy": 0}}, "at least one workflow"),
        ({"piecewise": 1.5}, "probability"),
        ({"noise": -1}, "noise"),
    ],
)
def test_bad_specs(spec: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SuiteSpec(**spec)  # type: ignore[arg-type]


def test_layer_widths() -> None:
    assert layer_widths([[], [], [0, 1]]) == [2, 2, 1]
    assert layer_widths([[], [0], [0], [1, 2]]) == [1, 2, 2, 1]


def test_placement_puts_lighter_tools_in_wider_layers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gen, "PLACEMENT_JITTER", 0.0)
    catalog = default_catalog()
    tools = [
        next(a for a in catalog.archetypes if a.name == n)
        for n in ("local_llm.load_model", "weather.forecast", "maps.geocode")
    ]
    preds = [[], [], [0, 1]]  # two parallel calls, then one aggregating call
    placed = place(tools, preds, Draws(0))
    assert placed[2].name == "local_llm.load_model"
    assert {placed[0].name, placed[1].name} == {"weather.forecast", "maps.geocode"}


def test_calls_carry_their_duration_spread_and_the_nominal_suite_is_unchanged() -> None:
    spec = partial(SuiteSpec, seed=3, counts={"easy": 5, "medium": 5, "hard": 2}, piecewise=0.5)
    with_spread, without = generate_suite(spec()), generate_suite(spec(varies=False))
    assert with_spread.meta["generator"]["varies"] and not without.meta["generator"]["varies"]
    for a, b in zip(with_spread.workflows, without.workflows, strict=True):
        assert b.tasks == tuple(t.model_copy(update={"varies": None}) for t in a.tasks)
        for task in a.tasks:
            assert task.varies is not None and task.varies.demand is None
            spread = task.varies.duration
            assert spread is not None and spread.kind == "lognormal"
            # the call's own run-to-run spread: centred on its duration, within the archetype's
            archetype = next(x for x in default_catalog().archetypes if x.name == task.tool)
            assert spread.p50 == pytest.approx(task.length)
            assert spread.p10 <= task.length <= spread.p90
            assert math.log(spread.p90 / spread.p10) <= 2 * 1.2816 * archetype.duration.sigma + 0.1
