"""Integer scaling: exact when the data allow, conservative rounding otherwise."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from solver_helpers import assert_safe
from strategies import machines, workflows

from peakopt.models import Machine, Task, Workflow
from peakopt.solver import solve
from peakopt.solver.scaling import ROUNDED_STEPS, exact_scale, mirror, scale


def _workflow(*tasks: Task) -> Workflow:
    return Workflow(id="w", tasks=tasks)


def test_two_decimals_give_a_hundredth_tick_and_exact_integers() -> None:
    workflow = _workflow(Task(id="a", duration=0.37, demand={"cpu": 1.5}), Task(id="b", duration=1.2))
    problem = scale(workflow, Machine(name="m", capacity={"cpu": 4}))
    assert problem.exact and problem.tick == Fraction(1, 100)
    assert problem.length == (37, 120)
    assert problem.units == (Fraction(1, 2),) and problem.capacity == (8,)
    assert problem.pieces[0][0].demand == (3,)


def test_common_factor_keeps_the_horizon_small() -> None:
    workflow = _workflow(Task(id="a", duration=1000.0), Task(id="b", duration=3000.0))
    problem = scale(workflow, Machine(name="m", capacity={"cpu": 1}))
    assert problem.tick == 1000 and problem.length == (1, 3)


def test_demand_over_capacity_is_clamped_to_the_capacity() -> None:
    workflow = _workflow(
        Task(id="a", duration=1, demand={"mem": 12.0}), Task(id="b", duration=1, demand={"mem": 2.0})
    )
    problem = scale(workflow, Machine(name="m", capacity={"mem": 8.0}))
    assert [p[0].demand[0] for p in problem.pieces] == [problem.capacity[0], 1]


def test_unlisted_resources_are_left_out() -> None:
    workflow = _workflow(Task(id="a", duration=1, demand={"gpu": 5.0, "cpu": 1.0}))
    problem = scale(workflow, Machine(name="m", capacity={"cpu": 2.0, "net": 1.0}))
    assert problem.resources == ("cpu",)


def test_thirds_are_rounded_up_and_marked_inexact() -> None:
    workflow = _workflow(
        Task(id="a", duration=1 / 3, demand={"cpu": 1 / 3}), Task(id="b", duration=2 / 3, depends_on=("a",))
    )
    machine = Machine(name="m", capacity={"cpu": 1.0})
    problem = scale(workflow, machine)
    assert not problem.exact and "rounded" in problem.note
    for task, length in zip(workflow.tasks, problem.length, strict=True):
        assert float(length * problem.tick) >= task.length
    (unit,) = problem.units
    assert problem.capacity == (ROUNDED_STEPS,) and float(problem.capacity[0] * unit) <= 1.0
    assert float(problem.pieces[0][0].demand[0] * unit) >= 1 / 3
    result = solve(workflow, machine, time_limit=5)
    assert_safe(result, workflow, machine)
    assert result.exact is False and result.lower_bound == pytest.approx(1.0)


def test_piecewise_boundary_tick_takes_the_higher_demand_when_rounded() -> None:
    task = Task(
        id="a",
        profile=[{"duration": 1 / 3, "demand": {"mem": 6}}, {"duration": 2 / 3, "demand": {"mem": 2}}],
    )
    problem = scale(_workflow(task), Machine(name="m", capacity={"mem": 8}))
    pieces = problem.pieces[0]
    boundary = 1 / 3 / float(problem.tick)
    high = [p for p in pieces if p.demand[0] == max(q.demand[0] for q in pieces)]
    assert high[-1].offset + high[-1].size >= boundary  # the spike is covered up to its real end
    assert sum(p.size for p in pieces) == problem.length[0]


def test_positive_values_never_scale_to_zero() -> None:
    found = exact_scale([1e-9, 1.0], 10**8)
    assert found is None or all(n > 0 for n in found[1])


def test_mirror_reverses_precedences_and_profiles() -> None:
    task = Task(
        id="a", profile=[{"duration": 1, "demand": {"cpu": 2}}, {"duration": 3, "demand": {"cpu": 1}}]
    )
    workflow = _workflow(task, Task(id="b", duration=2, depends_on=("a",)))
    problem = scale(workflow, Machine(name="m", capacity={"cpu": 2}))
    back = mirror(problem)
    assert back.preds == ((1,), ())
    assert [(p.offset, p.size, p.demand) for p in back.pieces[0]] == [(0, 3, (1,)), (3, 1, (2,))]


@settings(max_examples=60, deadline=None)
@given(workflows(max_tasks=5), machines())
def test_scaled_problem_covers_the_real_one(workflow: Workflow, machine: Machine) -> None:
    # (below the oracle's 1e-9 tolerance a duration may round to nothing)
    problem = scale(workflow, machine)
    for i, task in enumerate(workflow.tasks):
        assert float(problem.length[i] * problem.tick) >= task.length - 1e-9 * max(1.0, task.length)
        assert sum(p.size for p in problem.pieces[i]) == problem.length[i]
        for m, resource in enumerate(problem.resources):
            scaled = max((p.demand[m] for p in problem.pieces[i]), default=0) * problem.units[m]
            lasting = [s.demand.get(resource, 0.0) for s in task.segments if s.duration > 1e-6]
            real = min(max(lasting, default=0.0), machine.capacity[resource])
            assert float(scaled) >= real - 1e-9 * machine.capacity[resource]
    for m, resource in enumerate(problem.resources):
        assert float(problem.capacity[m] * problem.units[m]) <= machine.capacity[resource] * (1 + 1e-9)
