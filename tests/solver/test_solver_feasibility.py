"""Schedules in ticks and back: the compression of a rounded schedule in real time."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from solver_helpers import magnitude_instances

from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.solver.feasibility import end, left_justified, serial, to_seconds, to_ticks
from peakopt.solver.heuristics import best_schedule
from peakopt.solver.scaling import as_instance, scale


def test_a_rounded_chain_is_compressed_to_its_real_length() -> None:
    # 1000000.001 s beside a third of a second: no exact tick, so durations round up to whole ticks
    workflow = Workflow(
        id="w",
        tasks=[Task(id="a", duration=1000000.001), Task(id="b", duration=1 / 3, depends_on=["a"])],
    )
    problem = scale(workflow, Machine(name="m", capacity={"cpu": 1}))
    assert not problem.time_exact
    ticks = serial(problem, problem.order)
    assert to_seconds(problem, ticks)["b"] > 1000000.001
    assert left_justified(workflow, problem, ticks) == {"a": 0.0, "b": 1000000.001}


@settings(max_examples=60, deadline=None)
@given(magnitude_instances())
def test_compressed_constant_profiles_are_safe_and_no_later(instance: tuple[Workflow, Machine]) -> None:
    workflow, machine = instance
    constant = [
        Task(id=t.id, depends_on=t.depends_on, duration=t.segments[0].duration, demand=t.segments[0].demand)
        for t in workflow.tasks
    ]
    workflow = Workflow(id="w", tasks=constant)
    problem = scale(workflow, machine)
    flow, box = as_instance(problem)  # steps side by side where the integer problem allows
    ticks = to_ticks(problem, best_schedule(flow, box), Fraction(1))
    assert ticks is not None
    shifted = left_justified(workflow, problem, ticks)
    score = evaluate(workflow, machine, Schedule(workflow="w", starts=shifted))
    assert score.valid and score.safe
    assert score.makespan <= problem.seconds(end(problem, ticks))
    assert all(shifted[t] <= s for t, s in to_seconds(problem, ticks).items())
