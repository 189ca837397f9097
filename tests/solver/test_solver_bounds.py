"""Lower bounds: critical path, energy, cliques; never above a known optimum."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from paths import J30, j30_optima
from solver_helpers import tiny_instances

from peakopt.instances import load
from peakopt.models import Machine, Task, Workflow
from peakopt.solver import solve
from peakopt.solver.bounds import clique_bound, critical_path, energy_bound, lower_bound, real_lower_bound
from peakopt.solver.conflicts import conflict_matrix, conflict_structure, greedy_cliques, nodes
from peakopt.solver.scaling import scale


def test_critical_path_and_energy_by_hand() -> None:
    workflow = Workflow(
        id="w",
        tasks=(
            Task(id="a", duration=2, demand={"cpu": 2}),
            Task(id="b", duration=3, demand={"cpu": 2}, depends_on=("a",)),
            Task(id="c", duration=4, demand={"cpu": 1}),
        ),
    )
    machine = Machine(name="m", capacity={"cpu": 2})
    problem = scale(workflow, machine)
    assert critical_path(problem) == 5
    assert energy_bound(problem) == 7  # (2*2 + 3*2 + 4*1) / 2
    # every pair conflicts or is ordered: one clique, the bound is the sum
    assert clique_bound(problem, greedy_cliques(problem)) == 9
    assert real_lower_bound(workflow, machine) == pytest.approx(7.0)


def test_piecewise_spike_conflicts_but_steady_phase_does_not() -> None:
    spike = Task(
        id="s", profile=[{"duration": 1, "demand": {"mem": 6}}, {"duration": 3, "demand": {"mem": 2}}]
    )
    other = Task(id="o", duration=3, demand={"mem": 6})
    problem = scale(Workflow(id="w", tasks=(spike, other)), Machine(name="m", capacity={"mem": 8}))
    found = nodes(problem)
    conflict = conflict_matrix(problem, found)
    index = {(n.task, n.piece): k for k, n in enumerate(found)}
    assert conflict[index[0, 0], index[1, 0]]
    assert not conflict[index[0, 1], index[1, 0]]


@pytest.mark.parametrize("name", ["j301_1", "j3013_5", "j3029_3", "j3045_6"])
def test_bounds_never_exceed_the_j30_optimum(name: str) -> None:
    suite = load(J30 / f"{name}.sm")
    problem = scale(suite.workflows[0], suite.machines[0])
    assert lower_bound(problem, conflict_structure(problem).cliques) <= j30_optima()[name]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(tiny_instances())
def test_bounds_never_exceed_the_proven_optimum(instance: tuple[Workflow, Machine]) -> None:
    workflow, machine = instance
    problem = scale(workflow, machine)
    result = solve(workflow, machine, time_limit=10, workers=1)
    assert result.status == "optimal" and result.makespan is not None
    bound = lower_bound(problem, conflict_structure(problem).cliques)
    assert problem.seconds(bound) <= result.makespan + 1e-9
    assert real_lower_bound(workflow, machine) <= result.makespan + 1e-9
