"""Re-planning in the solver: ``solve(fixed=, release=)`` keeps the pins, checked by the oracle."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from solver_helpers import assert_safe, both_searches, tiny_instances

from peakopt.models import Machine, PeakoptError, Schedule, SolveResult, Task, Workflow
from peakopt.oracle import broken_pins, evaluate
from peakopt.solver import solve
from peakopt.solver.feasibility import feasible, serial, to_seconds
from peakopt.solver.pins import PinError, check_pins, pin
from peakopt.solver.scaling import scale

Pinned = tuple[Workflow, Machine, SolveResult, dict[str, float], dict[str, float]]


def assert_keeps(
    result: SolveResult,
    workflow: Workflow,
    machine: Machine,
    fixed: dict[str, float],
    release: dict[str, float],
) -> None:
    """The oracle accepts the re-plan and finds every fixed start kept and every release respected."""
    assert_safe(result, workflow, machine)
    assert result.schedule is not None
    assert broken_pins(result.schedule, fixed, release) == []
    for step, at in fixed.items():
        assert result.starts[step] == at


@st.composite
def pinned_instances(draw: st.DrawFn, max_tasks: int = 5) -> Pinned:
    """A tiny instance, its optimum, and pins that optimum keeps.

    The fixed steps are a random set closed under predecessors (as the steps started by some
    instant are), at the optimum's starts; the other steps get random release times no later
    than their starts there.
    """
    workflow, machine = draw(tiny_instances(max_tasks=max_tasks))
    free = solve(workflow, machine, time_limit=10, workers=1)
    assert free.status == "optimal"
    fixed: dict[str, float] = {}
    for task_id in (workflow.tasks[i].id for i in workflow.topological_order):
        task = workflow.tasks[workflow.index[task_id]]
        if all(p in fixed for p in task.depends_on) and draw(st.booleans()):
            fixed[task_id] = free.starts[task_id]
    release = {
        t.id: draw(st.integers(0, int(free.starts[t.id]))) * 1.0
        for t in workflow.tasks
        if t.id not in fixed and draw(st.booleans())
    }
    return workflow, machine, free, fixed, release


@settings(max_examples=60, deadline=None, derandomize=True)
@given(pinned_instances())
def test_a_replan_keeps_the_pins_and_is_no_better_than_the_free_optimum(instance: Pinned) -> None:
    workflow, machine, free, fixed, release = instance
    result = solve(workflow, machine, time_limit=10, workers=1, fixed=fixed, release=release)
    assert_keeps(result, workflow, machine, fixed, release)
    assert result.status == "optimal"
    assert free.makespan is not None and result.makespan is not None
    # the free optimum keeps these pins, so it is also the optimum under them
    assert result.makespan == pytest.approx(free.makespan)
    assert result.params.get("fixed", {}) == fixed
    assert result.params.get("release", {}) == release


@settings(max_examples=60, deadline=None, derandomize=True)
@given(tiny_instances(max_tasks=5), st.data())
def test_later_releases_cost_makespan_never_safety(
    instance: tuple[Workflow, Machine], data: st.DataObject
) -> None:
    workflow, machine = instance
    free = solve(workflow, machine, time_limit=10, workers=1)
    release = {t.id: data.draw(st.integers(0, 6)) * 0.5 for t in workflow.tasks if data.draw(st.booleans())}
    result = solve(workflow, machine, time_limit=10, workers=1, release=release)
    assert_keeps(result, workflow, machine, {}, release)
    assert free.makespan is not None and result.makespan is not None
    assert result.makespan >= free.makespan - 1e-9
    # the critical path from the release times is a lower bound
    lengths = {t.id: sum(s.duration for s in t.segments) for t in workflow.tasks}
    assert result.lower_bound is not None
    assert all(result.lower_bound >= at + lengths[step] - 1e-9 for step, at in release.items())


@settings(max_examples=40, deadline=None, derandomize=True)
@given(pinned_instances(max_tasks=4), st.integers(0, 4))
def test_cpsat_and_milp_agree_under_pins(instance: Pinned, later: int) -> None:
    workflow, machine, _, fixed, release = instance
    # releases pushed later than the free optimum's starts make the pins bind
    release = {step: at + later for step, at in release.items()}
    pins = check_pins(workflow, fixed, release)
    problem = pin(scale(workflow, machine, times=pins.times), pins)
    # both searches from the schedule around the pins (the serial one) and a zero bound
    assert feasible(problem, serial(problem, problem.order))
    exact, cross = both_searches(problem)
    spans = []
    for outcome in (exact, cross):
        assert outcome.bound == outcome.makespan
        schedule = Schedule(workflow=workflow.id, starts=to_seconds(problem, outcome.starts))
        score = evaluate(workflow, machine, schedule)
        assert score.valid and score.safe, score.reasons
        assert broken_pins(schedule, fixed, release) == []
        spans.append(score.makespan)
    assert spans[0] == pytest.approx(spans[1])


@settings(max_examples=40, deadline=None, derandomize=True)
@given(pinned_instances(max_tasks=4), st.integers(0, 4))
def test_solve_keeps_the_pins_and_reaches_the_optimum(backend: str, instance: Pinned, later: int) -> None:
    workflow, machine, _, fixed, release = instance
    release = {step: at + later for step, at in release.items()}
    pins = check_pins(workflow, fixed, release)
    problem = pin(scale(workflow, machine, times=pins.times), pins)
    exact, _ = both_searches(problem)  # the optimum around the pins, proven from a zero bound
    optimum = Schedule(workflow=workflow.id, starts=to_seconds(problem, exact.starts))
    result = solve(workflow, machine, time_limit=10, workers=1, backend=backend, fixed=fixed, release=release)
    assert_keeps(result, workflow, machine, fixed, release)
    assert result.makespan == pytest.approx(evaluate(workflow, machine, optimum).makespan)


def _chain() -> tuple[Workflow, Machine]:
    tasks = [
        Task(id="a", duration=2, demand={"cpu": 2}),
        Task(id="b", duration=1, demand={"cpu": 2}),
        Task(id="c", duration=1, depends_on=["a"], demand={"cpu": 1}),
        Task(id="d", duration=3, demand={"cpu": 1}),
    ]
    return Workflow(id="w", tasks=tasks), Machine(name="m", capacity={"cpu": 3})


@pytest.mark.parametrize(
    ("fixed", "release", "rule"),
    [
        ({"x": 1.0}, {}, "fixed names step 'x'"),
        ({}, {"x": 1.0}, "release names step 'x'"),
        ({"a": -1.0}, {}, "must be a number >= 0"),
        ({}, {"a": float("inf")}, "must be a number >= 0"),
        ({"a": 0.0}, {"a": 1.0}, "both fixed and released"),
        ({"c": 3.0}, {}, "depends on 'a', which is not fixed"),
        ({"a": 0.0, "c": 1.0}, {}, "before its fixed predecessor 'a' ends at 2 s"),
        ({"a": 0.0, "b": 1.0}, {}, "fixed steps 'a', 'b' together exceed the capacity 3 of 'cpu' at 1 s"),
    ],
)
def test_pins_no_schedule_keeps_are_one_clear_error(
    fixed: dict[str, float], release: dict[str, float], rule: str
) -> None:
    workflow, machine = _chain()
    with pytest.raises(PinError, match=rule) as caught:
        solve(workflow, machine, time_limit=5, fixed=fixed, release=release)
    assert isinstance(caught.value, PeakoptError)
    assert "workflow 'w'" in str(caught.value)


def test_the_pins_join_the_exact_time_grid() -> None:
    workflow, machine = _chain()
    # durations in whole seconds, pins in milliseconds: the grid becomes 1 ms, still exact
    result = solve(workflow, machine, time_limit=5, fixed={"a": 0.125}, release={"b": 0.001, "d": 0.3})
    assert_keeps(result, workflow, machine, {"a": 0.125}, {"b": 0.001, "d": 0.3})
    assert result.exact and result.tick == 0.001


def test_a_fixed_start_off_a_rounded_grid_is_refused_and_a_release_rounds_up() -> None:
    # 1e-9 s beside 1e7 s: no exact grid holds both, so time is rounded to a power of ten
    tasks = [
        Task(id="a", duration=1e7 + 1e-9, demand={"cpu": 1}),
        Task(id="b", duration=1e7, demand={"cpu": 1}),
    ]
    workflow, machine = Workflow(id="w", tasks=tasks), Machine(name="m", capacity={"cpu": 1})
    with pytest.raises(PinError, match="not on the solver's time grid"):
        solve(workflow, machine, time_limit=5, fixed={"a": 1.5e-9})
    result = solve(workflow, machine, time_limit=5, release={"b": 1.5e-9})
    assert not result.exact
    assert_keeps(result, workflow, machine, {}, {"b": 1.5e-9})


def test_a_release_that_meets_the_bound_returns_at_once() -> None:
    workflow, machine = _chain()
    release = {t.id: 10.0 for t in workflow.tasks}
    result = solve(workflow, machine, time_limit=5, release=release)
    assert_keeps(result, workflow, machine, {}, release)
    assert result.status == "optimal" and result.makespan == 14.0  # the free optimum (4), 10 s later
    # one step released at 4: the critical path from its release (6) is met by the heuristic at once
    single = Workflow(id="w", tasks=[Task(id="a", duration=2, demand={"cpu": 1})])
    alone = solve(single, machine, time_limit=5, release={"a": 4.0})
    assert alone.status == "optimal" and alone.makespan == 6.0 and alone.lower_bound == 6.0
    assert alone.params["phases"] == ["initial schedule meets the bound"]


def test_a_hint_that_breaks_the_pins_is_replaced_by_one_around_them() -> None:
    workflow, machine = _chain()
    hint = Schedule(workflow="w", starts={"a": 0.0, "b": 2.0, "c": 3.0, "d": 0.0})
    result = solve(workflow, machine, time_limit=5, hint=hint, fixed={"a": 0.0}, release={"d": 1.0, "b": 1.0})
    assert_keeps(result, workflow, machine, {"a": 0.0}, {"d": 1.0, "b": 1.0})


def test_the_energy_after_a_release_bounds_the_makespan() -> None:
    # three 1 s steps of 1 core on 2, released at 10 (no two conflict, so no clique): the energy
    # after 10 ends them by 12, which the schedule around the pins meets
    tasks = [Task(id=i, duration=1.0, demand={"cpu": 1.0}) for i in ("a", "b", "c")]
    workflow, machine = Workflow(id="w", tasks=tasks), Machine(name="m", capacity={"cpu": 2.0})
    release = {"a": 10.0, "b": 10.0, "c": 10.0}
    result = solve(workflow, machine, time_limit=5, release=release)
    assert_keeps(result, workflow, machine, {}, release)
    assert result.status == "optimal" and result.makespan == 12.0
    assert result.params["phases"] == ["initial schedule meets the bound"]
