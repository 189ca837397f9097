"""Energetic reasoning: its destructive bound never exceeds a known optimum, and it does raise bounds."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from paths import J30, PATTERSON, j30_optima, patterson_optima
from solver_helpers import tiny_instances

from peakopt.instances import load
from peakopt.models import Machine, Task, Workflow
from peakopt.solver import solve
from peakopt.solver.bounds import lower_bound
from peakopt.solver.conflicts import greedy_cliques
from peakopt.solver.energetic import Windows, destructive_bound
from peakopt.solver.scaling import IntegerProblem, scale


def _bound(problem: IntegerProblem, upper: int) -> int:
    return destructive_bound(problem, lower_bound(problem, greedy_cliques(problem)), upper)


def test_an_overloaded_interval_by_hand() -> None:
    """Two tasks of 2 s on the whole capacity, both forced into [0, 3): energy 4 > 3."""
    tasks = (
        Task(id="a", duration=2, demand={"cpu": 2}),
        Task(id="b", duration=2, demand={"cpu": 2}),
        Task(id="c", duration=1, depends_on=("a", "b")),
    )
    problem = scale(Workflow(id="w", tasks=tasks), Machine(name="m", capacity={"cpu": 2}))
    windows = Windows(problem)
    assert windows.infeasible(2)  # shorter than the critical path
    assert windows.infeasible(4)  # both must run within [0, 3)
    assert not windows.infeasible(5)


@pytest.mark.parametrize("name", ["j301_1", "j3013_1", "j3013_5", "j3029_3", "j3045_6", "j3037_4"])
def test_never_above_the_j30_optimum(name: str) -> None:
    suite = load(J30 / f"{name}.sm")
    problem = scale(suite.workflows[0], suite.machines[0])
    assert _bound(problem, problem.serial) <= j30_optima()[name]


@pytest.mark.parametrize("name", ["pat1", "pat10", "pat50", "pat77", "pat110"])
def test_never_above_the_patterson_optimum(name: str) -> None:
    suite = load(PATTERSON / f"{name}.rcp")
    problem = scale(suite.workflows[0], suite.machines[0])
    assert _bound(problem, problem.serial) <= patterson_optima()[name]


def test_raises_a_j90_bound() -> None:
    """j9037_4: critical path, energy and cliques give 96, energetic reasoning more (best known 123)."""
    suite = load(J30.parent / "j90" / "j9037_4.sm")
    problem = scale(suite.workflows[0], suite.machines[0])
    plain = lower_bound(problem, greedy_cliques(problem))
    assert plain < _bound(problem, problem.serial) <= 123


@settings(max_examples=60, deadline=None, derandomize=True)
@given(tiny_instances(max_tasks=6))
def test_never_above_the_optimum(backend: str, instance: tuple[Workflow, Machine]) -> None:
    workflow, machine = instance
    problem = scale(workflow, machine)
    result = solve(workflow, machine, time_limit=10, workers=1, backend=backend)
    assert result.status == "optimal" and result.makespan is not None
    assert problem.seconds(_bound(problem, problem.serial + 1)) <= result.makespan + 1e-9
