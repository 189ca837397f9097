"""CP-SAT and the time-indexed MILP agree on the optimum of tiny random workflows."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from solver_helpers import assert_safe, tiny_instances

from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.solver import solve
from peakopt.solver.backends import Limits, Outcome
from peakopt.solver.conflicts import conflict_structure
from peakopt.solver.cpsat import CpsatOptions
from peakopt.solver.feasibility import serial, to_seconds
from peakopt.solver.milp import MilpTooLarge, solve_milp
from peakopt.solver.scaling import IntegerProblem, scale
from peakopt.solver.search import search


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
    # both searches start from the serial schedule and a zero bound, so neither
    # can stop before solving (solve() would return a schedule that meets a bound)
    workflow, machine = instance
    problem = scale(workflow, machine)
    initial = serial(problem, problem.order)
    limits = Limits(time_limit=60, workers=1, seed=0)
    exact = search(
        problem,
        initial=initial,
        lower=0,
        found=conflict_structure(problem),
        limits=limits,
        options=CpsatOptions(),
    )
    cross = solve_milp(problem, initial=initial, lower=0, limits=limits)
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
