"""Seeded scenarios: reproducible, prefix-stable, within support, with the documented statistics."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import varying_workflows, workflows

from peakopt.models import Task, Varies, Workflow
from peakopt.models.uncertainty import Z90, is_fixed
from peakopt.oracle.uncertain.scenarios import Noise, _realised, draw

TIGHT = settings(max_examples=40, deadline=None)


def one(varies: dict[str, Any], duration: float = 4.0, **fields: Any) -> Workflow:
    task = Task.model_validate(
        {"id": "a", "duration": duration, "demand": {"cpu": 2.5}, "varies": varies, **fields}
    )
    return Workflow(id="w", tasks=(task, Task(id="b", duration=1.0, depends_on=("a",))))


@TIGHT
@given(varying_workflows(), st.integers(0, 3), st.integers(0, 20), st.integers(0, 20))
def test_reproducible_and_prefix_stable(workflow: Workflow, seed: int, few: int, more: int) -> None:
    small, large = draw(workflow, few, seed=seed), draw(workflow, few + more, seed=seed)
    assert draw(workflow, few, seed=seed) == small
    assert large.lengths[:few] == small.lengths and large.scales[:few] == small.scales
    assert len(large) == few + more


@TIGHT
@given(varying_workflows(), st.integers(0, 3))
def test_within_the_support_on_the_grid(workflow: Workflow, seed: int) -> None:
    scenarios = draw(workflow, 30, seed=seed)
    step = 10.0**-scenarios.places
    for i, task in enumerate(workflow.tasks):
        varies = task.varies or Varies.model_construct(duration=None, demand=None)
        for lengths, scales in zip(scenarios.lengths, scenarios.scales, strict=True):
            if is_fixed(varies.duration):  # kept exactly, even off the grid
                assert lengths[i] == task.length
            else:
                assert varies.duration is not None
                low, high = varies.duration.support(task.length)
                assert low - step <= lengths[i] <= high + step
                assert lengths[i] == round(lengths[i], scenarios.places)
            if varies.demand is None:
                assert scales[i] == 1.0
            else:
                low, high = varies.demand.support(1.0)
                assert low - 1e-3 <= scales[i] <= high + 1e-3


@TIGHT
@given(varying_workflows(), st.integers(0, 10))
def test_realised_workflow_matches_the_scenario(workflow: Workflow, k: int) -> None:
    scenarios = draw(workflow, k + 1, seed=1)
    realised = scenarios.workflow(k)
    assert realised.id == workflow.id and [t.id for t in realised.tasks] == [t.id for t in workflow.tasks]
    for task, nominal, length, scale in zip(
        realised.tasks, workflow.tasks, scenarios.lengths[k], scenarios.scales[k], strict=True
    ):
        assert task.varies is None and task.depends_on == nominal.depends_on
        assert task.length == pytest.approx(length, abs=1e-9)
        for got, was in zip(task.segments, nominal.segments, strict=True):
            for resource, amount in was.demand.items():
                assert got.demand[resource] == pytest.approx(amount * scale, rel=1e-9, abs=1e-12)
            if nominal.length > 0 and length > 0:  # segments keep their shares of the run
                assert got.duration / length == pytest.approx(
                    was.duration / nominal.length, abs=2e-3 / length
                )


def test_a_step_of_no_nominal_time_shares_its_run_out_evenly_and_wholly() -> None:
    # two segments of 0 s: nothing to be in proportion to; an even share each, rounded to the
    # grid, must still add up to the drawn run time (0.837 s came out as 2 x 0.418)
    task = Task.model_validate(
        {
            "id": "t",
            "profile": [{"duration": 0, "demand": {}}] * 2,
            "varies": {"duration": {"kind": "lognormal", "p10": 0.5, "p50": 1.0, "p90": 1.0}},
        }
    )
    workflow = Workflow(id="w", tasks=(task,))
    scenarios = draw(workflow, 40, seed=2)
    for k in range(40):
        (realised,) = scenarios.workflow(k).tasks
        assert realised.length == pytest.approx(scenarios.lengths[k][0], abs=1e-12)
        first, second = (s.duration for s in realised.segments)
        assert abs(first - second) <= 1e-3 + 1e-12


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 7), st.floats(0.001, 1e4), st.sampled_from([0, 1, 3, 6]))
def test_any_run_time_of_a_step_of_no_nominal_time_is_shared_out_wholly(
    parts: int, length: float, places: int
) -> None:
    task = Task.model_validate({"id": "t", "profile": [{"duration": 0, "demand": {}}] * parts})
    realised = _realised(task, round(length, places), 1.0, places)
    assert realised.length == pytest.approx(round(length, places), rel=1e-12, abs=1e-12)
    durations = [s.duration for s in realised.segments]
    assert min(durations) >= 0 and max(durations) - min(durations) <= 10.0**-places + 1e-9


@TIGHT
@given(workflows(), st.integers(0, 3))
def test_zero_noise_is_the_nominal_workflow(workflow: Workflow, seed: int) -> None:
    scenarios = draw(workflow, 5, seed=seed, noise=Noise())
    assert all(row == tuple(t.length for t in workflow.tasks) for row in scenarios.lengths)
    assert all(set(row) == {1.0} for row in scenarios.scales)
    assert scenarios.workflow(0) == workflow


def test_global_noise_replaces_the_tasks_own_distributions() -> None:
    workflow = one({"duration": {"kind": "empirical", "samples": [100.0]}})
    assert {row[0] for row in draw(workflow, 50).lengths} == {100.0}
    noisy = draw(workflow, 200, noise=Noise(duration=0.25, demand=0.5))
    lengths = [row[0] for row in noisy.lengths]
    assert 3.0 <= min(lengths) < 3.2 and 4.8 < max(lengths) <= 5.0
    assert min(r[1] for r in noisy.scales) >= 0.5 and max(r[1] for r in noisy.scales) <= 1.5


def test_common_random_numbers_across_noise_levels_and_seeds() -> None:
    workflow = one({"duration": {"kind": "uniform", "spread": 0.1}})
    low, high = draw(workflow, 100, noise=Noise(0.1)), draw(workflow, 100, noise=Noise(0.5))
    for a, b in zip(low.lengths, high.lengths, strict=True):
        # the same uniforms, stretched: the same side of the nominal value, five times as far
        assert (a[0] - 4.0) * 5 == pytest.approx(b[0] - 4.0, abs=5e-3)
    assert draw(workflow, 100, seed=1).lengths != draw(workflow, 100, seed=0).lengths
    renamed = workflow.model_copy(update={"id": "other"})
    assert draw(renamed, 100).lengths != draw(workflow, 100).lengths  # the content seeds the stream


@pytest.mark.parametrize("bad", [-0.1, 1.0, math.nan, math.inf, "0.1"])
def test_noise_rules(bad: Any) -> None:
    with pytest.raises(ValueError, match="noise duration must be in"):
        Noise(duration=bad)
    with pytest.raises(ValueError, match="count must be"):
        draw(one({"duration": {"kind": "uniform", "spread": 0.1}}), -1)
    with pytest.raises(ValueError, match="seed must be"):
        draw(one({"duration": {"kind": "uniform", "spread": 0.1}}), 1, seed=-1)


# Statistical checks: 20,000 draws with fixed seeds. Tolerances are several standard errors
# wide (never flaky for these seeds) yet far tighter than any bug in a transform would give.
N = 20_000


def lengths(varies: dict[str, Any], duration: float = 4.0) -> np.ndarray:
    return np.array([row[0] for row in draw(one(varies, duration), N, seed=7).lengths])


def test_uniform_spread_statistics() -> None:
    x = lengths({"duration": {"kind": "uniform", "spread": 0.2}})
    sd = 0.2 * 4.0 / math.sqrt(3)
    assert abs(x.mean() - 4.0) < 5 * sd / math.sqrt(N)
    assert np.quantile(x, 0.1) == pytest.approx(4.0 * (1 - 0.2 * 0.8), abs=0.02)


def test_triangular_statistics() -> None:
    x = lengths({"duration": {"kind": "triangular", "p10": 2, "p50": 3, "p90": 4.5}})
    for p, target in ((0.1, 2.0), (0.5, 3.0), (0.9, 4.5)):
        assert np.quantile(x, p) == pytest.approx(target, abs=0.05)


def test_lognormal_statistics() -> None:
    x = lengths({"duration": {"kind": "lognormal", "p10": 2, "p50": 3, "p90": 4.5}})
    assert np.median(x) == pytest.approx(3.0, abs=0.05)
    assert np.quantile(x, 0.9) / np.quantile(x, 0.1) == pytest.approx(2.25, rel=0.03)
    sigma = math.log(2.25) / (2 * Z90)
    assert x.mean() == pytest.approx(3.0 * math.exp(sigma**2 / 2), rel=0.01)


def test_empirical_statistics() -> None:
    x = lengths({"duration": {"kind": "empirical", "samples": [1.0, 2.0, 2.0, 7.0]}})
    assert set(np.unique(x)) == {1.0, 2.0, 7.0}
    assert np.mean(x == 2.0) == pytest.approx(0.5, abs=0.02)


def test_demand_multiplier_statistics() -> None:
    scenarios = draw(one({"demand": {"kind": "lognormal", "p10": 0.8, "p50": 1.0, "p90": 1.25}}), N, seed=3)
    scales = np.array([row[0] for row in scenarios.scales])
    assert np.median(scales) == pytest.approx(1.0, abs=0.01)
    assert {row[0] for row in scenarios.lengths} == {4.0}
    demand = scenarios.workflow(0).tasks[0].demand
    assert demand == {"cpu": round(2.5 * scenarios.scales[0][0], 4)}
