"""CP-SAT and the time-indexed MILP agree on the optimum of tiny random workflows."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from solver_helpers import assert_safe, tiny_instances

from peakopt.models import Machine, Task, Workflow
from peakopt.solver import solve
from peakopt.solver.milp import MAX_CELLS, MilpTooLarge


@settings(max_examples=200, deadline=None, derandomize=True)
@given(tiny_instances())
def test_cpsat_and_milp_agree_on_the_optimum(instance: tuple[Workflow, Machine]) -> None:
    workflow, machine = instance
    exact = solve(workflow, machine, time_limit=10, workers=1)
    cross = solve(workflow, machine, time_limit=10, workers=1, backend="milp")
    assert_safe(exact, workflow, machine)
    assert_safe(cross, workflow, machine)
    assert exact.status == cross.status == "optimal"
    assert exact.makespan == pytest.approx(cross.makespan)


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
    tasks = [Task(id=f"t{i}", duration=1000.0 + i, demand={"cpu": 1}) for i in range(MAX_CELLS // 1000)]
    workflow = Workflow(id="long", tasks=tasks)
    machine = Machine(name="m", capacity={"cpu": 2})
    with pytest.raises(MilpTooLarge, match="horizon × tasks"):
        solve(workflow, machine, backend="milp")
