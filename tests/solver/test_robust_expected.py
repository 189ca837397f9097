"""Robust references in expectation (peakopt.solver.expected) and the overflow left where demands vary."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from robust_helpers import longest_path_starts
from solver_helpers import tiny_instances

from peakopt.models import Machine, SolveResult, Task, Workflow
from peakopt.oracle import measure
from peakopt.oracle.judge.metrics import safe
from peakopt.oracle.uncertain.flows import pos_earliest_starts, pos_safe
from peakopt.oracle.uncertain.scenarios import Noise, draw
from peakopt.solver.expected import best_expected, candidates, makespans, overflow_share
from peakopt.solver.robust import peak_workflow, solve_robust


def realised_makespans(
    workflow: Workflow, edges: tuple[tuple[str, str], ...], lengths: list[list[float]]
) -> list[float]:
    """The POS's makespan per row of lengths, by the test's own longest path."""
    found = []
    for row in lengths:
        scaled = workflow.model_copy(
            update={
                "tasks": tuple(
                    t.model_copy(update={"profile": None, "duration": x, "demand": {}})
                    for t, x in zip(workflow.tasks, row, strict=True)
                )
            }
        )
        result = SolveResult(workflow=workflow.id, status="feasible", edges=edges)
        starts = longest_path_starts(scaled, result)
        found.append(max(starts[t.id] + x for t, x in zip(workflow.tasks, row, strict=True)))
    return found


@settings(max_examples=25)
@given(tiny_instances(max_tasks=6))
def test_the_choice_is_the_candidate_of_smallest_mean(instance: tuple[Workflow, Machine]) -> None:
    workflow, machine = instance
    nominal = solve_robust(workflow, machine, time_limit=10)
    assert nominal.starts is not None
    pool = candidates(workflow, machine, peak_workflow(workflow), nominal.starts)
    scenarios = draw(workflow, 40, seed=3, noise=Noise(0.4))
    select, report = [list(r) for r in scenarios.lengths[:20]], [list(r) for r in scenarios.lengths[20:]]
    for candidate in pool:
        assert pos_safe(workflow, machine, candidate.edges)
        assert makespans(workflow, machine, candidate, select) == pytest.approx(
            realised_makespans(workflow, candidate.edges, select)
        )
    means = [sum(realised_makespans(workflow, c.edges, select)) / 20 for c in pool]
    choice = best_expected(workflow, machine, pool, select, report)
    assert means[pool.index(choice.candidate)] == pytest.approx(min(means))
    assert choice.mean == pytest.approx(
        sum(realised_makespans(workflow, choice.candidate.edges, report)) / 20
    )
    assert choice.count == len(pool) == len({frozenset(c.edges) for c in pool})


@settings(max_examples=20)
@given(tiny_instances(max_tasks=6))
def test_an_expected_reference_is_a_safe_pos_bounded_by_the_nominal_optimum(
    instance: tuple[Workflow, Machine],
) -> None:
    workflow, machine = instance
    nominal = solve_robust(workflow, machine, time_limit=10)
    result = solve_robust(workflow, machine, robust="expected", samples=30, noise=Noise(0.3), time_limit=10)
    assert result.status in ("optimal", "feasible"), result.message
    assert pos_safe(workflow, machine, result.edges)
    assert result.starts == pos_earliest_starts(workflow, result.edges)
    assert nominal.makespan is not None and result.makespan is not None
    assert result.makespan >= nominal.makespan - 1e-9
    assert (result.status == "optimal") == (result.makespan <= nominal.makespan + 1e-9)
    assert result.lower_bound == pytest.approx(min(result.makespan, nominal.makespan))
    params = result.params
    assert params["robust"] == "expected" and params["samples"] == 30 and params["noise"] == [0.3, 0.0]
    assert params["overflow_probability"] == 0  # demands fixed: safe for any durations
    assert params["candidates"] >= 1 and params["chosen"]
    assert result.message is not None and "best found, not proven" in result.message


def test_with_nothing_varying_the_expected_reference_is_the_nominal_one() -> None:
    tasks = [Task(id=k, duration=2, demand={"cpu": 1}) for k in "abc"]
    workflow, machine = Workflow(id="w", tasks=tasks), Machine(name="m", capacity={"cpu": 2})
    result = solve_robust(workflow, machine, robust="expected", samples=10)
    assert result.params["chosen"] == "optimum/most"
    assert result.params["expected_makespan"] == result.makespan == 4
    assert result.message is not None and "nothing varies" in result.message


def parallel_instance() -> tuple[Workflow, Machine]:
    """Two 1-cpu steps side by side on a 2-cpu machine: full, so any demand above nominal overflows."""
    tasks = [Task(id="a", duration=2, demand={"cpu": 1}), Task(id="b", duration=2, demand={"cpu": 1})]
    return Workflow(id="w", tasks=tasks), Machine(name="m", capacity={"cpu": 2})


def test_the_overflow_left_where_demands_vary_is_measured_scenario_by_scenario() -> None:
    workflow, machine = parallel_instance()
    result = solve_robust(workflow, machine, samples=200, noise=Noise(0.2, 0.5), seed=4)
    assert result.edges == () and result.makespan == 2
    scenarios = draw(workflow, 400, seed=4, noise=Noise(0.2, 0.5))
    unsafe = 0
    for k in range(200, 400):  # the further scenarios, as for the expected figures
        realised = scenarios.workflow(k)
        unsafe += not safe(measure(realised, machine, longest_path_starts(realised, result)))
    share = result.params["overflow_probability"]
    assert share == unsafe / 200
    assert 0.35 < share < 0.65  # the two multipliers, uniform in [0.5, 1.5], sum above 2 half the time
    assert (
        result.message is not None
        and f"overflows a capacity in {share:.1%} of 200 scenarios" in result.message
    )


def test_with_demands_fixed_nothing_is_simulated() -> None:
    workflow, machine = parallel_instance()
    result = solve_robust(workflow, machine, samples=50, noise=Noise(0.5))
    assert result.params["overflow_probability"] == 0
    candidate = candidates(workflow, machine, peak_workflow(workflow), result.starts or {})[0]
    assert overflow_share(workflow, machine, candidate, draw(workflow, 5, noise=Noise(0.5)), range(5)) == 0


def test_samples_must_be_positive() -> None:
    workflow, machine = parallel_instance()
    with pytest.raises(ValueError, match="samples must be at least 1"):
        solve_robust(workflow, machine, samples=0)
