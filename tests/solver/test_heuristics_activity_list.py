"""The genetic algorithm on its own: safe, never below the optimum, its starts an activity list."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from paths import J30
from solver_helpers import tiny_instances

from peakopt.instances import load
from peakopt.models import Machine, Workflow
from peakopt.oracle import evaluate
from peakopt.oracle.uncertain.policies import plan_sequence
from peakopt.solver import solve
from peakopt.solver.heuristics import genetic_schedule


@settings(max_examples=25, deadline=None)
@given(tiny_instances())
def test_safe_and_never_below_the_optimum(instance: tuple[Workflow, Machine]) -> None:
    workflow, machine = instance
    plan = genetic_schedule(workflow, machine, seconds=0.05)
    score = evaluate(workflow, machine, plan)
    assert score.valid and score.safe and plan.source == "genetic"
    optimum = solve(workflow, machine, time_limit=10, workers=1)
    assert optimum.lower_bound is not None and score.makespan >= optimum.lower_bound - 1e-9


def test_its_list_is_precedence_feasible_on_j30() -> None:
    suite = load(J30 / "j301_1.sm")
    workflow, machine = suite.workflows[0], suite.machines[0]
    plan = genetic_schedule(workflow, machine, seconds=0.2, seed=1)
    assert evaluate(workflow, machine, plan).makespan >= 43  # PSPLIB's optimum
    placed = {task: k for k, task in enumerate(plan_sequence(workflow, plan))}
    assert all(placed[p] < placed[j] for j, preds in enumerate(workflow.predecessors) for p in preds)


def test_a_budget_that_is_not_positive_is_refused() -> None:
    suite = load(J30 / "j301_1.sm")
    with pytest.raises(ValueError, match="seconds must be positive"):
        genetic_schedule(suite.workflows[0], suite.machines[0], seconds=0)
