"""The stochastic RCPSP literature's protocol: its five distributions, its metric and the realised bounds."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import machines, workflows

from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle.uncertain.literature import (
    LITERATURE_DISTRIBUTIONS,
    LiteratureDistribution,
    ProtocolError,
    beta_shape,
    cpl_deviation,
    critical_paths,
    draw_literature,
    energy_bounds,
    literature_values,
    relative_gaps,
)
from peakopt.oracle.uncertain.scenarios import uniforms
from peakopt.oracle.uncertain.simulate import Simulation

#: Each distribution's variance for a deterministic duration d (the papers' table).
VARIANCE: dict[str, Callable[[float], float]] = {
    "U1": lambda d: d / 3,
    "U2": lambda d: d**2 / 3,
    "Exp": lambda d: d**2,
    "B1": lambda d: d / 3,
    "B2": lambda d: d**2 / 3,
}
#: Each distribution's support for d.
SUPPORT: dict[str, Callable[[float], tuple[float, float]]] = {
    "U1": lambda d: (d - d**0.5, d + d**0.5),
    "U2": lambda d: (0.0, 2 * d),
    "Exp": lambda d: (0.0, np.inf),
    "B1": lambda d: (d / 2, 2 * d),
    "B2": lambda d: (d / 2, 2 * d),
}


@pytest.mark.parametrize("name", LITERATURE_DISTRIBUTIONS)
def test_mean_is_the_duration_and_variance_the_papers(name: LiteratureDistribution) -> None:
    durations = np.array([0.0, 1.0, 3.0, 10.0])
    u = np.random.default_rng(7).random((200_000, len(durations)))
    values = literature_values(name, durations, u)
    for k, d in enumerate(durations):
        column = values[:, k]
        if d == 0:
            assert not column.any()  # a dummy activity stays at zero
            continue
        assert column.mean() == pytest.approx(d, rel=0.01)
        assert column.var() == pytest.approx(VARIANCE[name](d), rel=0.03)
        low, high = SUPPORT[name](d)
        assert low - 1e-9 <= column.min() and column.max() <= high + 1e-9


def test_the_betas_shapes() -> None:
    # B2 is (1/6, 1/3) whatever d; B1 at d = 1 is B2, and at d = 10 has alpha = 5 - 1/3
    assert beta_shape("B2", 7.0) == pytest.approx(1 / 6)
    assert beta_shape("B1", 1.0) == pytest.approx(1 / 6)
    assert beta_shape("B1", 10.0) == pytest.approx(14 / 3)


def chain(*durations: float) -> Workflow:
    tasks = [
        Task(id=f"t{k}", duration=d, demand={"r": 1}, depends_on=(f"t{k - 1}",) if k else ())
        for k, d in enumerate(durations)
    ]
    return Workflow(id="chain", tasks=tasks)


def test_common_random_numbers_and_prefix_stability() -> None:
    workflow = chain(2.0, 5.0, 0.0, 3.0)
    u = uniforms(workflow, 50, 3)[:, 0, :]
    u2 = draw_literature(workflow, 50, "U2", seed=3)
    # U2 is 2 d u: the very uniforms of the stream, rounded to 1 ms
    assert np.array(u2.lengths) == pytest.approx(np.round(2 * np.array([2.0, 5.0, 0.0, 3.0]) * u, 3))
    assert draw_literature(workflow, 20, "U2", seed=3).lengths == u2.lengths[:20]
    # the same quantiles under every distribution: the orders of the realisations agree
    exp = np.array(draw_literature(workflow, 50, "Exp", seed=3).lengths)
    assert (np.argsort(exp[:, 1]) == np.argsort(np.array(u2.lengths)[:, 1])).all()
    assert set(u2.scales[0]) == {1.0}


@pytest.mark.parametrize(("name", "duration"), [("U1", 0.5), ("B1", 0.5), ("B1", 2 / 3)])
def test_a_duration_outside_the_domain_is_refused(name: LiteratureDistribution, duration: float) -> None:
    with pytest.raises(ProtocolError, match=f"task 't1': {name} is not defined for duration"):
        draw_literature(chain(1.0, duration), 3, name)


def test_an_unknown_distribution_is_refused() -> None:
    with pytest.raises(ProtocolError, match="unknown distribution 'N'"):
        draw_literature(chain(1.0), 3, "N")  # type: ignore[arg-type]


def test_critical_paths_and_energy_bounds_by_hand() -> None:
    # a -> c, b alone; r: capacity 2, demands a 2, b 1, c 1 (b's work 1 per period)
    tasks = (
        Task(id="a", duration=2, demand={"r": 2}),
        Task(id="b", duration=2, demand={"r": 1}),
        Task(id="c", duration=1, demand={"r": 3}, depends_on=("a",)),
    )
    workflow, machine = Workflow(id="w", tasks=tasks), Machine(name="m", capacity={"r": 2})
    lengths = [[2.0, 2.0, 1.0], [1.0, 5.0, 1.0]]
    assert critical_paths(workflow, lengths).tolist() == [3.0, 5.0]
    # work: a 2 * 2, b 2 * 1, c 1 * 2 (clamped) = 8 over capacity 2 = 4; then 2 + 5 + 2 = 9 -> 4.5
    assert energy_bounds(workflow, machine, lengths).tolist() == [4.0, 4.5]
    soft = Machine(name="m", capacity={"r": 2}, soft=("r",))
    assert energy_bounds(workflow, soft, lengths).tolist() == [0.0, 0.0]


def test_the_literature_metric_by_hand() -> None:
    """Three activities, one resource of capacity 1, three fixed scenarios, the optimum's order.

    a (2) and b (2) both need the resource, c (1) follows a and needs nothing: the CPL at the
    deterministic durations is a + c = 3, the optimum a, then b beside c, makespan 4.
    """
    tasks = (
        Task(id="a", duration=2, demand={"r": 1}),
        Task(id="b", duration=2, demand={"r": 1}),
        Task(id="c", duration=1, depends_on=("a",)),
    )
    workflow, machine = Workflow(id="w", tasks=tasks), Machine(name="m", capacity={"r": 1})
    plan = Schedule(workflow="w", machine="m", starts={"a": 0, "b": 2, "c": 2})
    cpl = float(critical_paths(workflow, [[2.0, 2.0, 1.0]])[0])
    assert cpl == 3.0
    simulation = Simulation(workflow, machine, "order", plan)
    scenarios = [[1.0, 3.0, 1.0], [3.0, 1.0, 2.0], [2.0, 2.0, 1.0]]
    makespans = []
    for lengths in scenarios:
        starts = simulation.run(lengths)
        makespans.append(max(s + d for s, d in zip(starts, lengths, strict=True)))
    # by hand: a 0-1, b 1-4, c 1-2 -> 4; a 0-3, b 3-4, c 3-5 -> 5; a 0-2, b 2-4, c 2-3 -> 4
    assert makespans == [4.0, 5.0, 4.0]
    assert cpl_deviation(makespans, cpl) == pytest.approx((13 / 3 - 3) / 3)  # 44.4 %
    assert cpl_deviation(makespans, 0.0) is None


def test_relative_gaps() -> None:
    assert relative_gaps([4.0, 5.0, 0.0], [4.0, 4.0, 0.0]).tolist() == [0.0, 0.25, 0.0]


@settings(max_examples=40, deadline=None)
@given(workflows(integer=True, piecewise=False), machines(integer=True), st.integers(0, 3))
def test_no_safe_run_beats_the_realised_bound(workflow: Workflow, machine: Machine, seed: int) -> None:
    """Every policy's realised makespan is at least the larger of the realised CP and energy bounds."""
    from peakopt.oracle.uncertain.policies import Admission

    scenarios = draw_literature(workflow, 10, "Exp", seed=seed)
    lengths = np.array(scenarios.lengths)
    bounds = np.maximum(critical_paths(workflow, lengths), energy_bounds(workflow, machine, lengths))
    simulation = Simulation(workflow, machine, Admission(workflow, machine))
    for row, bound in zip(lengths.tolist(), bounds.tolist(), strict=True):
        starts = simulation.run(row)
        span = max((s + d for s, d in zip(starts, row, strict=True)), default=0.0)
        assert span >= bound * (1 - 1e-9) - 1e-9
