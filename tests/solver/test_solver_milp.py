"""CP-SAT and the time-indexed MILP agree on the optimum of tiny random workflows."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from solver_helpers import assert_safe, both_searches, tiny_instances

from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.solver import solve
from peakopt.solver.backends import Outcome
from peakopt.solver.feasibility import to_seconds
from peakopt.solver.milp import MilpTooLarge
from peakopt.solver.scaling import IntegerProblem, scale


def _judge(workflow: Workflow, machine: Machine, problem: IntegerProblem, outcome: Outcome) -> float:
    """The oracle's makespan of an outcome, after checking it is proven, valid and safe."""
    assert outcome.bound == outcome.makespan
    starts = to_seconds(problem, outcome.starts)
    score = evaluate(workflow, machine, Schedule(workflow=workflow.id, starts=starts))
    assert score.valid and score.safe, score.reasons
    return score.makespan


@pytest.mark.slow
@settings(max_examples=200, deadline=None, derandomize=True)
@given(tiny_instances())
def test_cpsat_and_milp_agree_on_the_optimum(instance: tuple[Workflow, Machine]) -> None:
    workflow, machine = instance
    problem = scale(workflow, machine)
    exact, cross = both_searches(problem)
    assert _judge(workflow, machine, problem, exact) == pytest.approx(
        _judge(workflow, machine, problem, cross)
    )


@settings(max_examples=40, deadline=None, derandomize=True)
@given(tiny_instances(max_tasks=4, halves=True))
def test_agreement_with_half_second_data(instance: tuple[Workflow, Machine]) -> None:
    workflow, machine = instance
    exact = solve(workflow, machine, time_limit=10, workers=1)
    cross = solve(workflow, machine, time_limit=10, workers=1, backend="milp")
    assert_safe(exact, workflow, machine)
    assert_safe(cross, workflow, machine)
    assert exact.makespan == pytest.approx(cross.makespan)


def test_milp_refuses_a_long_horizon() -> None:
    # an odd number of near-equal tasks, two at a time: the energy bound stays below the optimum
    tasks = [Task(id=f"t{i}", duration=1000.0 + i % 2, demand={"cpu": 1}) for i in range(21)]
    workflow = Workflow(id="long", tasks=tasks)
    machine = Machine(name="m", capacity={"cpu": 2})
    with pytest.raises(MilpTooLarge, match="horizon × tasks"):
        solve(workflow, machine, backend="milp")
