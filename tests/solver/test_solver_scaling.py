"""Integer scaling: exact when the data allow, conservative rounding otherwise."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from oracle_helpers import topological
from solver_helpers import assert_safe, magnitude_instances
from strategies import machines, workflows

from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.solver import solve
from peakopt.solver.feasibility import feasible, to_ticks
from peakopt.solver.heuristics import best_schedule
from peakopt.solver.heuristics.arrays import compile_problem
from peakopt.solver.scaling import ROUNDED_STEPS, as_instance, exact_scale, mirror, scale


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


def test_a_third_and_two_thirds_scale_exactly_as_written() -> None:
    # 0.3333333333333333 and 0.6666666666666666: the second is twice the first, exactly
    workflow = _workflow(Task(id="a", duration=1 / 3), Task(id="b", duration=2 / 3, depends_on=("a",)))
    problem = scale(workflow, Machine(name="m", capacity={"cpu": 1.0}))
    assert problem.exact and problem.length == (1, 2) and problem.tick == Fraction("0.3333333333333333")


def test_a_third_beside_a_seventh_is_rounded_up_and_marked_inexact() -> None:
    workflow = _workflow(
        Task(id="a", duration=1 / 3, demand={"cpu": 1 / 3}), Task(id="b", duration=1 / 7, depends_on=("a",))
    )
    machine = Machine(name="m", capacity={"cpu": 1.0})
    problem = scale(workflow, machine)
    assert not problem.exact and not problem.time_exact
    assert (
        "durations rounded up to ticks of 1e-06 s" in problem.note
        and "cpu demands rounded up" in problem.note
    )
    for task, length in zip(workflow.tasks, problem.length, strict=True):
        assert length * problem.tick >= Fraction(repr(task.length))
    (unit,) = problem.units
    assert problem.capacity == (ROUNDED_STEPS,) and problem.capacity[0] * unit == 1
    assert problem.pieces[0][0].demand[0] * unit >= Fraction(repr(1 / 3))
    result = solve(workflow, machine, time_limit=5)
    assert_safe(result, workflow, machine)
    # compressed in real time, the chain ends at 1/3 + 1/7 exactly: the bound, so proven optimal
    assert result.exact is False and result.status == "optimal"
    assert result.makespan == result.lower_bound == float(Fraction(repr(1 / 3)) + Fraction(repr(1 / 7)))


def test_piecewise_boundary_tick_takes_the_higher_demand_when_rounded() -> None:
    task = Task(
        id="a",
        profile=[{"duration": 1 / 3, "demand": {"mem": 6}}, {"duration": 1 / 7, "demand": {"mem": 2}}],
    )
    problem = scale(_workflow(task), Machine(name="m", capacity={"mem": 8}))
    assert not problem.time_exact
    pieces = problem.pieces[0]
    boundary = Fraction(repr(1 / 3)) / problem.tick
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


def test_exactness_is_decided_on_the_decimals_not_within_a_billionth() -> None:
    # 1000000.001 s beside 1 s: today tick 1 s "exact" (1000000.001 is within 1e-9 of an integer)
    workflow = _workflow(Task(id="a", duration=1000000.001), Task(id="b", duration=1, depends_on=("a",)))
    problem = scale(workflow, Machine(name="m", capacity={"cpu": 1}))
    assert problem.exact and problem.tick == Fraction(1, 1000) and problem.length == (1000000001, 1000)


def test_demands_within_a_billionth_of_a_unit_scale_exactly() -> None:
    workflow = _workflow(
        Task(id="a", duration=10, demand={"cpu": 500000.0004}),
        Task(id="b", duration=10, demand={"cpu": 499999.9998}),
    )
    problem = scale(workflow, Machine(name="m", capacity={"cpu": 1000000}))
    assert problem.exact and problem.units == (Fraction(1, 5000),)
    assert [p[0].demand[0] for p in problem.pieces] == [2500000002, 2499999999]
    assert problem.capacity == (5000000000,)  # so the two never fit together


def test_float_noise_in_a_duration_is_not_taken_for_a_round_number() -> None:
    # 0.1 + 0.2 computed in floats is 0.30000000000000004: not a tenth-second tick
    workflow = _workflow(Task(id="a", duration=0.1 + 0.2), Task(id="b", duration=1.0))
    problem = scale(workflow, Machine(name="m", capacity={"cpu": 1}))
    assert not problem.exact and not problem.time_exact and "durations rounded up" in problem.note
    assert problem.length[0] * problem.tick >= Fraction(repr(0.1 + 0.2))


def test_a_fine_time_grid_is_traded_for_exact_demands() -> None:
    # exact ticks of 1 ms would need demands rounded (capacity × horizon past int64's comfort)
    workflow = _workflow(
        Task(id="a", duration=1000000.001, demand={"mem": 0.1}), Task(id="b", duration=1, demand={"mem": 0.2})
    )
    problem = scale(workflow, Machine(name="m", capacity={"mem": 123456789.1}))
    assert not problem.time_exact and problem.units == (Fraction(1, 10),)
    assert problem.note.startswith("durations rounded up") and "mem" not in problem.note


def _exact_schedules(workflow: Workflow, machine: Machine) -> list[dict[str, Fraction]]:
    """Serial, and earliest starts if they are safe: real schedules in exact decimals."""
    lengths = {
        t.id: sum((Fraction(repr(s.duration)) for s in t.segments), Fraction(0)) for t in workflow.tasks
    }
    clock = Fraction(0)
    serial_starts: dict[str, Fraction] = {}
    early: dict[str, Fraction] = {}
    for task_id in topological(workflow):
        serial_starts[task_id], clock = clock, clock + lengths[task_id]
        preds = workflow.task(task_id).depends_on
        early[task_id] = max((early[p] + lengths[p] for p in preds), default=Fraction(0))
    score = evaluate(
        workflow, machine, Schedule(workflow="w", starts={t: float(x) for t, x in early.items()})
    )
    return [serial_starts, early] if score.safe and score.valid else [serial_starts]


@settings(max_examples=60, deadline=None)
@given(magnitude_instances())
def test_every_real_schedule_fits_the_relaxation(instance: tuple[Workflow, Machine]) -> None:
    # a real schedule starting s runs at tick floor(s / tick) in the relaxation: its bounds are real
    workflow, machine = instance
    relaxed = scale(workflow, machine, relaxed=True)
    upward = scale(workflow, machine)
    assert (relaxed.tick, relaxed.units, relaxed.capacity) == (upward.tick, upward.units, upward.capacity)
    for starts in _exact_schedules(workflow, machine):
        assert feasible(relaxed, [int(starts[t] // relaxed.tick) for t in relaxed.ids])
    for task, short, long in zip(workflow.tasks, relaxed.length, upward.length, strict=True):
        length = sum((Fraction(repr(s.duration)) for s in task.segments), Fraction(0))
        assert short * relaxed.tick <= length <= long * upward.tick


@settings(max_examples=30, deadline=None)
@given(magnitude_instances())
def test_heuristics_on_the_integer_problem_fit_it(instance: tuple[Workflow, Machine]) -> None:
    problem = scale(*instance)
    flow, box = as_instance(problem)
    assert to_ticks(problem, best_schedule(flow, box), Fraction(1)) is not None


@settings(max_examples=30, deadline=None)
@given(workflows(max_tasks=8), machines())
def test_solvers_and_heuristics_read_the_workflows_order(workflow: Workflow, machine: Machine) -> None:
    assert scale(workflow, machine).order == workflow.topological_order
    assert scale(workflow, machine, relaxed=True).order == workflow.topological_order
    assert compile_problem(workflow, machine).topo == workflow.topological_order
