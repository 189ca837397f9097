"""The robust reference (peakopt.solver.robust): a partial-order schedule safe whatever the durations."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from robust_helpers import longest_path_starts, realise
from solver_helpers import tiny_instances

from peakopt.models import Machine, SolveResult, Task, Workflow
from peakopt.oracle import evaluate, measure, with_reference
from peakopt.oracle.judge.metrics import avoidable_cva, dependency_violations, efficiency
from peakopt.oracle.tables.montecarlo import monte_carlo
from peakopt.oracle.uncertain.flows import pos_earliest_starts, pos_safe
from peakopt.oracle.uncertain.scenarios import Noise, draw
from peakopt.oracle.uncertain.simulate import Simulation
from peakopt.solver import robust as robust_module
from peakopt.solver import solve
from peakopt.solver.robust import solve_robust


def check_robust(
    workflow: Workflow, machine: Machine, result: SolveResult, realisations: int, seed: int
) -> None:
    """Safe at nominal durations and under every sampled realisation of them."""
    assert result.status == "optimal", result.message
    assert pos_safe(workflow, machine, result.edges)
    assert result.starts == pytest.approx(longest_path_starts(workflow, result))
    assert result.makespan == pytest.approx(max(result.starts[t.id] + t.length for t in workflow.tasks))
    rng = random.Random(seed)
    for _ in range(realisations):
        realised = realise(workflow, rng)
        measured = measure(realised, machine, longest_path_starts(realised, result))
        assert dependency_violations(measured) == 0
        assert avoidable_cva(measured) == 0


@settings(max_examples=20)
@given(tiny_instances(max_tasks=5))
def test_the_robust_pos_never_overflows_whatever_the_durations(instance: tuple[Workflow, Machine]) -> None:
    workflow, machine = instance
    result = solve_robust(workflow, machine, time_limit=10, workers=1)
    check_robust(workflow, machine, result, 1000, seed=len(workflow.tasks))


@pytest.mark.slow
@settings(max_examples=40)
@given(tiny_instances(max_tasks=6, halves=True))
def test_the_robust_pos_never_overflows_in_thousands_of_realisations(
    instance: tuple[Workflow, Machine],
) -> None:
    workflow, machine = instance
    result = solve_robust(workflow, machine, time_limit=10, workers=1)
    check_robust(workflow, machine, result, 2500, seed=7)


@settings(max_examples=15)
@given(tiny_instances(max_tasks=6))
def test_monte_carlo_scoring_of_the_robust_pos_finds_no_overflow(instance: tuple[Workflow, Machine]) -> None:
    workflow, machine = instance
    result = solve_robust(workflow, machine, time_limit=10)
    schedule = result.schedule
    assert schedule is not None
    figures = monte_carlo(
        workflow,
        machine,
        Simulation(workflow, machine, "pos", schedule),
        draw(workflow, 300, noise=Noise(0.9)),
        execution="pos",
    )
    assert (figures.overflow_rate, figures.violation_rate, figures.safe_rate) == (0, 0, 1)


def constant(workflow: Workflow) -> Workflow:
    """Every step with its first segment's usage over its whole length (a constant profile)."""
    tasks = [
        t.model_copy(update={"profile": None, "duration": t.length, "demand": t.segments[0].demand})
        for t in workflow.tasks
    ]
    return workflow.model_copy(update={"tasks": tuple(tasks)})


@settings(max_examples=30)
@given(tiny_instances(max_tasks=5))
def test_robust_costs_at_least_the_optimum_and_nothing_with_constant_profiles(
    instance: tuple[Workflow, Machine],
) -> None:
    workflow, machine = instance
    plain, robust = solve(workflow, machine, time_limit=10), solve_robust(workflow, machine, time_limit=10)
    assert plain.status == robust.status == "optimal"
    assert plain.makespan is not None and robust.makespan is not None
    assert robust.makespan >= plain.makespan - 1e-9
    flat = constant(workflow)
    plain, robust = solve(flat, machine, time_limit=10), solve_robust(flat, machine, time_limit=10)
    assert plain.status == robust.status == "optimal"
    assert robust.makespan == pytest.approx(plain.makespan)


@settings(max_examples=20)
@given(tiny_instances(max_tasks=4))
def test_cpsat_and_milp_agree_on_the_robust_optimum(instance: tuple[Workflow, Machine]) -> None:
    workflow, machine = instance
    cpsat = solve_robust(workflow, machine, time_limit=10, backend="cpsat")
    milp = solve_robust(workflow, machine, time_limit=10, backend="milp")
    assert cpsat.status == milp.status == "optimal", (cpsat.message, milp.message)
    assert cpsat.makespan == pytest.approx(milp.makespan)
    assert pos_safe(workflow, machine, milp.edges)


def spike_instance() -> tuple[Workflow, Machine]:
    spike = Task(
        id="s", profile=[{"duration": 1, "demand": {"cpu": 2}}, {"duration": 3, "demand": {"cpu": 1}}]
    )
    return Workflow(id="w", tasks=[spike, Task(id="t", duration=1, demand={"cpu": 1})]), Machine(
        name="m", capacity={"cpu": 2}
    )


def test_a_spike_is_ordered_and_the_record_says_it_is_robust() -> None:
    workflow, machine = spike_instance()
    assert solve(workflow, machine).makespan == 4  # t runs beside the tail of s
    result = solve_robust(workflow, machine)
    assert (result.status, result.makespan, result.lower_bound) == ("optimal", 5, 5)
    assert result.edges in ((("s", "t"),), (("t", "s"),))
    assert result.params["robust"] == "nominal"
    assert result.starts == pos_earliest_starts(workflow, result.edges)
    schedule = result.schedule
    assert schedule is not None and schedule.edges == result.edges


def test_the_realisations_catch_a_pos_without_its_edges() -> None:
    workflow, machine = spike_instance()
    result = solve_robust(workflow, machine).model_copy(update={"edges": ()})
    rng = random.Random(1)
    overflows = [
        avoidable_cva(measure(r, machine, longest_path_starts(r, result)))
        for r in (realise(workflow, rng) for _ in range(200))
    ]
    assert max(overflows) > 0


def test_a_robust_reference_gives_no_gap_to_the_optimum() -> None:
    workflow, machine = spike_instance()
    plain, robust = solve(workflow, machine), solve_robust(workflow, machine)
    assert plain.schedule is not None
    score = with_reference(evaluate(workflow, machine, plain.schedule), robust)
    # the plain optimum beats the robust one while safe at nominal durations: not a gap below 0
    assert score.gap is None and score.gap_vs_lb is None
    assert score.gap_vs_ub == pytest.approx(4 / 5 - 1)
    assert efficiency(score.makespan, score.safe, robust) is None
    assert efficiency(score.makespan, score.safe, plain) == 1


def test_a_pos_the_oracle_rejects_is_an_error_record(monkeypatch: pytest.MonkeyPatch) -> None:
    workflow, machine = spike_instance()
    monkeypatch.setattr(robust_module, "resource_flow_edges", lambda *args: ())
    result = solve_robust(workflow, machine)
    assert result.status == "error"
    assert result.message is not None and "steps s, t are unordered" in result.message


def test_an_unknown_mode_is_refused() -> None:
    workflow, machine = spike_instance()
    with pytest.raises(ValueError, match="robust must be one of"):
        solve_robust(workflow, machine, robust="sometimes")  # type: ignore[arg-type]
