"""solve(): optimal schedules the oracle accepts, bounds below known optima, statuses, anytime."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle_helpers import serial as serial_schedule
from paths import J30, PATTERSON, j30_optima, patterson_optima
from solver_helpers import assert_safe, magnitude_instances, tiny_instances
from strategies import machines, workflows

from peakopt.instances import load
from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle import evaluate, same_time
from peakopt.solver import solve
from peakopt.solver.cpsat import CpsatOptions
from peakopt.solver.heuristics import best_schedule
from peakopt.solver.scaling import scale

QUICK_J30 = ["j301_1", "j301_2", "j305_3", "j3011_4", "j3021_5", "j3037_2", "j3048_10"]
QUICK_PATTERSON = ["pat1", "pat9", "pat50", "pat104"]


def _instance(path: str) -> tuple[Workflow, Machine]:
    suite = load(path)
    return suite.workflows[0], suite.machines[0]


@pytest.mark.parametrize("name", QUICK_J30)
def test_j30_optimum(name: str) -> None:
    workflow, machine = _instance(str(J30 / f"{name}.sm"))
    result = solve(workflow, machine, time_limit=30, workers=2)
    assert_safe(result, workflow, machine)
    assert result.status == "optimal"
    assert result.makespan == j30_optima()[name]
    assert result.exact and result.tick == 1.0


@pytest.mark.parametrize("name", QUICK_J30[:3])
def test_without_presolve_the_same_optimum_is_proven(name: str) -> None:
    workflow, machine = _instance(str(J30 / f"{name}.sm"))
    result = solve(workflow, machine, time_limit=30, workers=1, options=CpsatOptions(presolve=False))
    assert_safe(result, workflow, machine)
    assert result.status == "optimal" and result.makespan == j30_optima()[name]


@settings(max_examples=40, deadline=None)
@given(tiny_instances(max_tasks=5, halves=True))
def test_without_presolve_tiny_instances_agree(instance: tuple[Workflow, Machine]) -> None:
    workflow, machine = instance
    plain = solve(workflow, machine, time_limit=10, workers=1)
    bare = solve(workflow, machine, time_limit=10, workers=1, options=CpsatOptions(presolve=False))
    assert_safe(bare, workflow, machine)
    assert plain.status == bare.status == "optimal" and plain.makespan == bare.makespan


@pytest.mark.parametrize("name", QUICK_PATTERSON)
def test_patterson_optimum(name: str) -> None:
    workflow, machine = _instance(str(PATTERSON / f"{name}.rcp"))
    result = solve(workflow, machine, time_limit=30, workers=2)
    assert_safe(result, workflow, machine)
    assert result.makespan == patterson_optima()[name]


def test_hard_instance_under_a_tiny_time_limit_keeps_a_schedule_and_a_valid_bound() -> None:
    workflow, machine = _instance(str(J30 / "j3029_3.sm"))
    result = solve(workflow, machine, time_limit=0.05, workers=1)
    assert_safe(result, workflow, machine)
    assert result.lower_bound is not None
    assert result.lower_bound <= j30_optima()["j3029_3"]


def test_refund_example_is_optimal_and_safe() -> None:
    workflow, machine = _instance("bundled:refund")
    result = solve(workflow, machine, time_limit=10)
    assert_safe(result, workflow, machine)
    assert result.status == "optimal"
    assert result.tick == pytest.approx(0.1)
    assert result.cva_floor == 0.0


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(workflows(max_tasks=6), machines())
def test_every_schedule_is_safe_even_with_arbitrary_floats(workflow: Workflow, machine: Machine) -> None:
    result = solve(workflow, machine, time_limit=5, workers=1)
    assert_safe(result, workflow, machine)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(tiny_instances())
def test_same_seed_one_worker_same_schedule(instance: tuple[Workflow, Machine]) -> None:
    workflow, machine = instance
    first = solve(workflow, machine, time_limit=10, workers=1, seed=7)
    second = solve(workflow, machine, time_limit=10, workers=1, seed=7)
    assert first.starts == second.starts


def test_over_capacity_step_runs_alone_on_its_resource() -> None:
    workflow = Workflow(
        id="spike",
        tasks=(
            Task(id="load", duration=2, demand={"mem": 12}),
            Task(id="a", duration=3, demand={"mem": 2, "cpu": 1}),
            Task(id="b", duration=3, demand={"cpu": 1}),
        ),
    )
    machine = Machine(name="m", capacity={"mem": 8, "cpu": 4})
    result = solve(workflow, machine, time_limit=10)
    assert_safe(result, workflow, machine)
    assert result.makespan == 5  # load alone for 2 s; b may overlap it (no memory)
    assert result.cva_floor == pytest.approx(2 * (12 / 8 - 1))


def test_resource_the_machine_does_not_list_is_unconstrained() -> None:
    tasks = tuple(Task(id=f"t{i}", duration=1, demand={"gpu": 100}) for i in range(3))
    workflow = Workflow(id="free", tasks=tasks)
    result = solve(workflow, Machine(name="m", capacity={"cpu": 1}), time_limit=5)
    assert result.makespan == 1 and result.status == "optimal"


def test_piecewise_profile_lets_a_steady_phase_overlap() -> None:
    spike = Task(
        id="spike", profile=[{"duration": 1, "demand": {"mem": 6}}, {"duration": 3, "demand": {"mem": 2}}]
    )
    other = Task(id="other", duration=3, demand={"mem": 6})
    workflow = Workflow(id="pw", tasks=(spike, other))
    machine = Machine(name="m", capacity={"mem": 8})
    result = solve(workflow, machine, time_limit=5)
    assert_safe(result, workflow, machine)
    assert result.makespan == 4  # other starts after the spike, beside the steady phase


def test_schedule_meeting_the_bound_returns_without_cpsat() -> None:
    chain = tuple(Task(id=f"t{i}", duration=1, depends_on=(f"t{i - 1}",) if i else ()) for i in range(4))
    workflow = Workflow(id="chain", tasks=chain)
    result = solve(workflow, Machine(name="m", capacity={"cpu": 1}), time_limit=5)
    assert result.status == "optimal" and result.makespan == 4
    assert result.params["phases"] == ["initial schedule meets the bound"]


def test_unsafe_hint_is_ignored_and_a_good_hint_is_used() -> None:
    workflow, machine = _instance(str(J30 / "j301_1.sm"))
    bad = Schedule(workflow=workflow.id, starts=dict.fromkeys(workflow.index, 0.0))
    result = solve(workflow, machine, time_limit=10, hint=bad)
    assert_safe(result, workflow, machine)
    # under a limit too short for the search, the good hint is what comes back
    good = solve(workflow, machine, time_limit=1e-3, workers=1, hint=result.schedule)
    assert_safe(good, workflow, machine)
    assert good.makespan == result.makespan == j30_optima()["j301_1"]


@pytest.mark.slow
def test_progress_reports_incumbents_and_bounds() -> None:
    workflow, machine = _instance(str(J30 / "j3013_10.sm"))
    seen: list[tuple[float | None, float]] = []
    result = solve(workflow, machine, time_limit=20, progress=lambda inc, bound: seen.append((inc, bound)))
    assert_safe(result, workflow, machine)
    assert seen
    assert all(bound <= j30_optima()["j3013_10"] for _, bound in seen)


def test_gap_limit_stops_early_within_the_gap() -> None:
    workflow, machine = _instance(str(J30 / "j3029_3.sm"))
    result = solve(workflow, machine, time_limit=30, gap_limit=0.25)
    assert_safe(result, workflow, machine)
    assert result.makespan is not None and result.lower_bound is not None
    assert (result.makespan - result.lower_bound) / result.makespan <= 0.25


@pytest.mark.parametrize(
    "options", [CpsatOptions(destructive=False), CpsatOptions(cliques=False, makespan_interval=False)]
)
def test_model_variants_reach_the_optimum(options: CpsatOptions) -> None:
    workflow, machine = _instance(str(J30 / "j3011_4.sm"))
    result = solve(workflow, machine, time_limit=30, options=options)
    assert_safe(result, workflow, machine)
    assert result.makespan == j30_optima()["j3011_4"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"time_limit": 0}, "time_limit"),
        ({"time_limit": -1.0}, "time_limit"),
        ({"workers": 0}, "workers"),
        ({"gap_limit": 1.5}, "gap_limit"),
        ({"backend": "gurobi"}, "backend"),
    ],
)
def test_invalid_arguments_raise(kwargs: dict[str, object], message: str) -> None:
    workflow, machine = _instance("bundled:refund")
    with pytest.raises(ValueError, match=message):
        solve(workflow, machine, **kwargs)  # type: ignore[arg-type]


def test_a_dozen_steps_of_a_million_seconds_and_a_millisecond_on_three_resources() -> None:
    # today: tick 1e6 s "exact", each step 1 ms short, "status error: the oracle rejects the schedule"
    demand = [{"cpu": 2, "mem": 3, "gpu": 1}, {"cpu": 1, "mem": 1, "gpu": 3}, {"cpu": 3, "mem": 2, "gpu": 2}]
    workflow = Workflow(
        id="w",
        tasks=[Task(id=f"t{i}", duration=1000000.001, demand=demand[i % 3]) for i in range(12)],
    )
    machine = Machine(name="m", capacity={"cpu": 4, "mem": 4, "gpu": 4})
    result = solve(workflow, machine, time_limit=10)
    assert_safe(result, workflow, machine)
    assert result.exact and result.tick == 1000000.001  # every step is one tick, exactly
    # the first and second kinds pair up, the third runs alone: 4 + 4 ticks
    assert result.status == "optimal" and result.makespan == 8000000.008


def test_a_million_seconds_and_a_millisecond_then_one_second_is_optimal_to_the_millisecond() -> None:
    # today: optimal and exact at 1000001.0, b starting 1 ms before a ends (and the oracle agreed)
    workflow = Workflow(
        id="w", tasks=[Task(id="a", duration=1000000.001), Task(id="b", duration=1, depends_on=["a"])]
    )
    result = solve(workflow, Machine(name="m", capacity={"cpu": 1}), time_limit=10)
    assert result.status == "optimal" and result.exact and result.tick == 0.001
    assert result.makespan == result.lower_bound == 1000001.001
    assert result.starts == {"a": 0.0, "b": 1000000.001}


def test_demands_a_billionth_of_the_capacity_apart_never_share_it() -> None:
    # 500000.0004 + 499999.9998 > 1000000: today "optimal at 10 s" where the optimum is 20 s
    workflow = Workflow(
        id="w",
        tasks=[
            Task(id="a", duration=10, demand={"cpu": 500000.0004}),
            Task(id="b", duration=10, demand={"cpu": 499999.9998}),
        ],
    )
    machine = Machine(name="m", capacity={"cpu": 1000000})
    result = solve(workflow, machine, time_limit=10)
    assert_safe(result, workflow, machine)
    assert result.status == "optimal" and result.exact
    assert result.makespan == result.lower_bound == 20.0


def test_a_microsecond_beside_ten_million_seconds_is_rounded_safely_and_bounded() -> None:
    # no exact tick keeps the horizon small: durations round up, the result says so and by how much
    workflow = Workflow(
        id="w",
        tasks=[
            Task(id="a", duration=1e7 + 0.000001, demand={"cpu": 0.7}),
            Task(id="b", duration=0.000001, demand={"cpu": 0.7}),
            Task(id="c", duration=3.14159, demand={"cpu": 0.2}, depends_on=["b"]),
        ],
    )
    machine = Machine(name="m", capacity={"cpu": 1})
    result = solve(workflow, machine, time_limit=10)
    assert_safe(result, workflow, machine)
    assert not result.exact and result.message is not None and "rounded up to ticks of" in result.message
    optimum = Fraction("10000000.000001") + Fraction("0.000001")  # a and b conflict; c fits beside a
    assert result.lower_bound <= optimum <= Fraction(repr(result.makespan))


@settings(max_examples=40, deadline=None)
@given(magnitude_instances())
def test_any_magnitudes_give_a_safe_schedule_and_a_valid_bound(instance: tuple[Workflow, Machine]) -> None:
    # 1e-9 s beside 1e10 s, huge and tiny demands: never an error, the oracle accepts every result
    workflow, machine = instance
    result = solve(workflow, machine, time_limit=5)
    assert_safe(result, workflow, machine)
    assert result.lower_bound is not None and result.makespan is not None
    # the bound is below every safe schedule, so below the optimum (these add floats: up to noise)
    for other in (serial_schedule(workflow), best_schedule(workflow, machine, effort="fast")):
        score = evaluate(workflow, machine, other)
        if score.valid and score.safe:
            assert result.lower_bound <= score.makespan or same_time(result.lower_bound, score.makespan)
    if result.exact:  # the integer problem is the real one: every duration is whole ticks
        tick = scale(workflow, machine).tick
        assert all(
            (Fraction(repr(s.duration)) / tick).denominator == 1 for t in workflow.tasks for s in t.segments
        )
    if result.status == "optimal":
        assert result.lower_bound == result.makespan


@settings(max_examples=30, deadline=None)
@given(magnitude_instances(), st.booleans())
def test_the_bound_never_passes_a_known_optimum(instance: tuple[Workflow, Machine], chain: bool) -> None:
    # constructed optima: a chain (its length), or steps that each need more than half the machine
    workflow, machine = instance
    if chain:
        tasks = [
            Task(id=t.id, depends_on=[workflow.tasks[i - 1].id] if i else [], profile=t.segments)
            for i, t in enumerate(workflow.tasks)
        ]
    else:
        tasks = [
            Task(id=t.id, duration=t.length, demand={r: c * 0.75 for r, c in machine.capacity.items()})
            for t in workflow.tasks
        ]
    workflow = Workflow(id="w", tasks=tasks)
    optimum = sum((Fraction(repr(s.duration)) for t in workflow.tasks for s in t.segments), Fraction(0))
    result = solve(workflow, machine, time_limit=5)
    assert_safe(result, workflow, machine)
    assert result.lower_bound is not None and result.makespan is not None
    # (a proven optimum is reported as the nearest float, which may print a hair either side)
    assert Fraction(repr(result.lower_bound)) <= optimum or same_time(result.lower_bound, float(optimum))
    assert optimum <= Fraction(repr(result.makespan)) or same_time(result.makespan, float(optimum))


def test_a_load_within_the_tolerance_of_the_capacity_is_allowed_as_the_oracle_allows_it() -> None:
    # 0.4 + 0.30000000000000004 is 1e-16 over 0.7: the oracle calls that at capacity, so must the model
    workflow = Workflow(
        id="w",
        tasks=[
            Task(id="a", duration=1, demand={"cpu": 0.4}),
            Task(id="b", duration=1, demand={"cpu": 0.1 + 0.2}),
        ],
    )
    machine = Machine(name="m", capacity={"cpu": 0.7})
    result = solve(workflow, machine, time_limit=10)
    assert_safe(result, workflow, machine)
    assert result.exact and result.status == "optimal" and result.makespan == 1.0


@st.composite
def noisy_instances(draw: st.DrawFn) -> tuple[Workflow, Machine]:
    """2–3 steps of 1–3 s whose demands and capacity are float sums of tenths (0.1 + 0.2...)."""

    def tenths() -> float:
        return sum([0.1] * draw(st.integers(1, 9)), 0.0)

    count = draw(st.integers(2, 3))
    tasks = [
        Task(
            id=f"t{i}",
            duration=draw(st.integers(1, 3)),
            demand={"cpu": tenths()},
            depends_on=[f"t{j}" for j in range(i) if draw(st.integers(0, 3)) == 0],
        )
        for i in range(count)
    ]
    return Workflow(id="w", tasks=tasks), Machine(name="m", capacity={"cpu": tenths()})


@settings(max_examples=25, deadline=None)
@given(noisy_instances())
def test_the_optimum_is_the_best_schedule_the_oracle_calls_safe(
    backend: str, instance: tuple[Workflow, Machine]
) -> None:
    # brute force over whole-second starts (enough for whole-second durations): solver and oracle agree
    workflow, machine = instance
    horizon = int(sum(t.length for t in workflow.tasks))
    scores = (
        evaluate(
            workflow, machine, Schedule(workflow="w", starts=dict(zip(workflow.index, starts, strict=True)))
        )
        for starts in itertools.product(range(horizon + 1), repeat=len(workflow.tasks))
    )
    best = min(score.makespan for score in scores if score.safe)
    result = solve(workflow, machine, time_limit=10, backend=backend)
    assert_safe(result, workflow, machine)
    assert result.lower_bound is not None and result.lower_bound <= best
    if result.exact:
        assert result.status == "optimal" and result.makespan == best


@pytest.mark.parametrize(
    ("tasks", "capacity"),
    [
        ([Task(id="a", duration=1e300, demand={"c": 1}), Task(id="b", duration=3e299, demand={"c": 1})], 1.0),
        ([Task(id="a", duration=5e-324, demand={"c": 1}), Task(id="b", duration=1, demand={"c": 1})], 1.0),
        (
            [Task(id="a", duration=1, demand={"c": 1e300}), Task(id="b", duration=2, demand={"c": 1e-300})],
            1e-300,
        ),
        ([Task(id=f"t{i}", duration=[1e-9, 1e10, 3.3333][i % 3], demand={"c": 0.6}) for i in range(9)], 1.0),
    ],
    ids=["1e300 s", "denormal", "1e300 on 1e-300", "1e-9 s beside 1e10 s"],
)
def test_extreme_finite_numbers_give_a_safe_schedule(tasks: list[Task], capacity: float) -> None:
    workflow, machine = Workflow(id="w", tasks=tasks), Machine(name="m", capacity={"c": capacity})
    assert_safe(solve(workflow, machine, time_limit=10), workflow, machine)


def test_a_schedule_past_the_largest_float_is_an_error_not_a_crash() -> None:
    # two steps of 1.7e308 s that cannot overlap end past any float: nothing to write, and it says so
    tasks = [Task(id=t, duration=1.7e308, demand={"c": 1}) for t in "ab"]
    result = solve(Workflow(id="w", tasks=tasks), Machine(name="m", capacity={"c": 1}), time_limit=5)
    assert result.status == "error" and result.starts is None
    assert result.message is not None and "past the largest float" in result.message
    # the figures a result without a schedule reports: none, and the content hashes of a reference
    assert (result.makespan, result.lower_bound, result.cva_floor) == (None, None, 0.0)
    assert result.solver == "cpsat"
    assert result.workflow_hash is not None and result.machine_hash is not None


def test_demands_with_float_noise_are_rounded_without_losing_what_the_oracle_allows() -> None:
    # 17-digit durations and demands (0.1 * i + 0.2...): no exact grid fits, so both round; rounding
    # demands up forbids pairs that sum to the capacity plus noise, which the oracle allows: the
    # relaxation's schedule, judged by the oracle, closes the gap
    workflow = Workflow(
        id="w",
        tasks=[Task(id=f"t{i}", duration=0.1 * (i + 1) + 0.2, demand={"c": 0.1 * i}) for i in range(10)],
    )
    machine = Machine(name="m", capacity={"c": 0.7})
    result = solve(workflow, machine, time_limit=10)
    assert_safe(result, workflow, machine)
    assert not result.exact and result.status == "optimal"
    assert result.makespan == result.lower_bound == pytest.approx(5.7, rel=1e-12)
