"""The slowed makespan (processor sharing on soft resources): worked cases and a brute-force check."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import workflows

from peakopt.models import Machine, Schedule, SolveResult, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.oracle.judge.evaluate import with_reference
from peakopt.oracle.judge.metrics import charged_makespan, efficiency, measure
from peakopt.oracle.judge.slowdown import slowed_end
from peakopt.oracle.tables.rows import ScoreRow
from peakopt.oracle.tables.score_rows import with_efficiency

CPU3 = Machine(name="m", capacity={"cpu": 3, "memory_mb": 100}, soft=("cpu",))


def flow(*tasks: Task) -> Workflow:
    return Workflow(id="w", tasks=tasks)


def at(workflow: Workflow, **starts: float) -> Schedule:
    return Schedule(workflow=workflow.id, machine="m", starts=starts)


def test_two_steps_sharing_a_core_take_twice_as_long() -> None:
    workflow = flow(Task(id="a", duration=1, demand={"cpu": 3}), Task(id="b", duration=1, demand={"cpu": 3}))
    score = evaluate(workflow, CPU3, at(workflow, a=0, b=0))
    assert score.safe and score.makespan == 1
    assert score.slowed_makespan == 2  # load 6 on 3 cores: each at half speed
    assert score.avoidable_cva_soft == 1 and score.avoidable_cva_hard == 0
    assert score.resources["cpu"].kind == "soft" and score.resources["memory_mb"].kind == "hard"


def test_a_step_speeds_up_when_the_other_ends() -> None:
    # a: 1 s, b: 3 s, both 3 cores on 3: shared at 1/2 until a ends at 2 (b has done 1 s), then b
    # alone for its last 2 s: 4 s
    workflow = flow(Task(id="a", duration=1, demand={"cpu": 3}), Task(id="b", duration=3, demand={"cpu": 3}))
    assert evaluate(workflow, CPU3, at(workflow, a=0, b=0)).slowed_makespan == 4


def test_a_step_not_using_the_resource_is_not_slowed_but_a_successor_waits() -> None:
    workflow = flow(
        Task(id="a", duration=1, demand={"cpu": 3}),
        Task(id="b", duration=1, demand={"cpu": 3}),
        Task(id="c", duration=5, demand={"memory_mb": 10}),
        Task(id="d", duration=1, depends_on=("a",), demand={"memory_mb": 10}),
    )
    score = evaluate(workflow, CPU3, at(workflow, a=0, b=0, c=0, d=1))
    assert score.makespan == 5 and score.slowed_makespan == 5  # c, unslowed, is the last
    ends = slowed_end(workflow, measure(workflow, CPU3, {"a": 0, "b": 0, "c": 0, "d": 1}))
    assert ends == 5
    shorter = flow(*workflow.tasks[:2], Task(id="c", duration=1), workflow.tasks[3])
    # d waits for a (ends at 2, not 1): 3 s
    assert evaluate(shorter, CPU3, at(shorter, a=0, b=0, c=0, d=1)).slowed_makespan == 3


def test_a_step_over_capacity_alone_is_not_slowed() -> None:
    workflow = flow(Task(id="a", duration=2, demand={"cpu": 6}))
    score = evaluate(workflow, CPU3, at(workflow, a=0))
    assert score.safe and score.slowed_makespan == 2 and score.avoidable_cva_soft == 0


def test_the_clamped_demand_slows_beside_others() -> None:
    # a: 6 cores (clamped to 3) with b: 3 cores -> clamped load 6 on 3: both at half speed
    workflow = flow(Task(id="a", duration=1, demand={"cpu": 6}), Task(id="b", duration=1, demand={"cpu": 3}))
    assert evaluate(workflow, CPU3, at(workflow, a=0, b=0)).slowed_makespan == 2


def test_piecewise_segments_use_their_own_demand() -> None:
    # a: 1 s at 3 cores, then 2 s at 0; b: 1 s at 3 cores. Shared for a's first segment: both at 1/2,
    # till 2; then a's idle segment at full speed, 2 s: 4
    a = Task(id="a", profile=[{"duration": 1, "demand": {"cpu": 3}}, {"duration": 2, "demand": {}}])
    workflow = flow(a, Task(id="b", duration=1, demand={"cpu": 3}))
    assert evaluate(workflow, CPU3, at(workflow, a=0, b=0)).slowed_makespan == 4


def test_exact_rational_rates() -> None:
    # three 1-core steps on 2 cores (loads 3 on 2): each at 2/3 for 1 s of work: 1.5 s
    machine = Machine(name="m", capacity={"cpu": 2}, soft=("cpu",))
    workflow = flow(*(Task(id=i, duration=1, demand={"cpu": 1}) for i in "abc"))
    measured = measure(workflow, machine, {"a": 0, "b": 0, "c": 0})
    assert slowed_end(workflow, measured) == Fraction(3, 2)


def test_hard_overflow_does_not_slow_and_is_unsafe() -> None:
    machine = Machine(name="m", capacity={"cpu": 3, "memory_mb": 10}, soft=("cpu",))
    workflow = flow(
        Task(id="a", duration=1, demand={"memory_mb": 8}), Task(id="b", duration=1, demand={"memory_mb": 8})
    )
    score = evaluate(workflow, machine, at(workflow, a=0, b=0))
    assert not score.safe and score.avoidable_cva_hard == 0.6
    assert score.slowed_makespan == 1  # unsafe, it earns nothing, but it has its slowed makespan
    assert slowed_end(workflow, measure(workflow, machine, {"a": 0, "b": 0})) == 1  # nor a slowdown


def test_the_fluid_model_beating_the_optimum_earns_no_negative_gap() -> None:
    # three 2-core steps on 3 cores: no two fit at once (optimum 3 s, one after another); shared,
    # load 6 on 3, they all end at 2 s: processor sharing beats the non-preemptive optimum
    workflow = flow(*(Task(id=i, duration=1, demand={"cpu": 2}) for i in "abc"))
    score = evaluate(workflow, CPU3, at(workflow, a=0, b=0, c=0))
    assert score.safe and score.slowed_makespan == 2
    optimum = SolveResult(workflow="w", machine="m", status="optimal", makespan=3, lower_bound=3)
    judged = with_reference(score, optimum)
    assert judged.gap == 0 and judged.gap_vs_lb == 0
    charged = charged_makespan(score.makespan, score.slowed_makespan, optimum, soft_overflow=True)
    assert charged == 3 and efficiency(charged, score.safe, optimum) == 1


def test_sharing_that_leaves_the_makespan_as_it_is_earns_no_negative_gap_either() -> None:
    # the three shared steps end at 2 s, before a 2.5 s step that uses no core: makespan 2.5 s,
    # slowed or not, against the optimum's 3 s (the Monte Carlo benchmark found such runs)
    tasks = [*(Task(id=i, duration=1, demand={"cpu": 2}) for i in "abc"), Task(id="d", duration=2.5)]
    workflow = flow(*tasks)
    score = evaluate(workflow, CPU3, at(workflow, a=0, b=0, c=0, d=0))
    assert score.safe and score.makespan == score.slowed_makespan == 2.5
    optimum = SolveResult(workflow="w", machine="m", status="optimal", makespan=3, lower_bound=3)
    assert with_reference(score, optimum).gap == 0


def test_soft_as_hard_counts_soft_overflow_as_unsafe() -> None:
    workflow = flow(Task(id="a", duration=1, demand={"cpu": 3}), Task(id="b", duration=1, demand={"cpu": 3}))
    strict = evaluate(workflow, CPU3, at(workflow, a=0, b=0), soft_as_hard=True)
    plain = evaluate(workflow, CPU3.as_hard(), at(workflow, a=0, b=0))
    assert not strict.safe and strict == plain and strict.slowed_makespan == strict.makespan  # none soft


def _brute_force(workflow: Workflow, machine: Machine, starts: dict[str, float], tick: float) -> float:
    """Processor sharing by fixed time steps of ``tick`` (no event logic): an independent check."""
    soft = machine.soft
    left = {t.id: [s.duration for s in t.segments] for t in workflow.tasks}
    ends: dict[str, float] = {}
    begun: set[str] = set()
    now = 0.0
    for _ in range(10**6):
        for t in workflow.tasks:  # start when planned and every predecessor is done
            if t.id not in begun and starts[t.id] <= now + 1e-9 and all(p in ends for p in t.depends_on):
                begun.add(t.id)
        for tid in begun - ends.keys():  # zero-length segments (and steps) take no time
            while left[tid] and left[tid][0] <= 1e-12:
                left[tid].pop(0)
            if not left[tid]:
                ends[tid] = now
        if len(ends) == len(workflow.tasks):
            return max(ends.values(), default=0.0)
        active = [t for t in workflow.tasks if t.id in begun and t.id not in ends]

        def demand(task: Task, resource: str) -> float:
            segment = task.segments[len(task.segments) - len(left[task.id])]
            return min(segment.demand.get(resource, 0.0), machine.capacity[resource])

        loads = {r: sum(demand(t, r) for t in active) for r in soft}
        for t in active:
            rates = [
                machine.capacity[r] / loads[r]
                for r in soft
                if demand(t, r) > 0 and loads[r] > machine.capacity[r]
            ]
            left[t.id][0] -= min(rates, default=1.0) * tick
        now += tick
    raise AssertionError("no end")


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_slowed_makespan_matches_a_brute_force_time_stepping(data: st.DataObject) -> None:
    workflow = data.draw(workflows(max_tasks=4, resources=("cpu",), integer=True))
    machine = Machine(name="m", capacity={"cpu": data.draw(st.integers(1, 6))}, soft=("cpu",))
    starts = {t.id: float(data.draw(st.integers(0, 4))) for t in workflow.tasks}
    # a dependency-valid schedule: each step no earlier than its predecessors' nominal ends
    for index in workflow.topological_order:
        task = workflow.tasks[index]
        ready = max((starts[p] + workflow.task(p).length for p in task.depends_on), default=0.0)
        starts[task.id] = max(starts[task.id], ready)
    measured = measure(workflow, machine, starts)
    slowed = measured.seconds(slowed_end(workflow, measured))
    tick = 1 / 256  # a power of two: the time steps are exact in floats
    brute = _brute_force(workflow, machine, starts, tick)
    segments = sum(len(t.segments) for t in workflow.tasks)
    # each segment's end is late by under a tick, and a late end keeps the others slowed a tick more
    assert abs(slowed - brute) <= 2 * segments * tick * 6


#: (tasks, starts, machine) of valid schedules that overflow a hard resource, and their slowed
#: makespans by hand: the hard overflow is the unsafety and changes no rate; the soft one slows.
UNSAFE = {
    "hard overflow only": (
        [
            Task(id="a", duration=1, demand={"memory_mb": 80}),
            Task(id="b", duration=2, demand={"memory_mb": 80}),
        ],
        {"a": 0, "b": 0},
        2,
    ),
    "hard and soft overflow": (
        [
            Task(id="a", duration=1, demand={"cpu": 3, "memory_mb": 80}),
            Task(id="b", duration=1, demand={"cpu": 3, "memory_mb": 80}),
        ],
        {"a": 0, "b": 0},
        2,  # load 6 on 3 cores: both at half speed
    ),
    "soft overflow slowing a successor": (
        [
            Task(id="a", duration=1, demand={"cpu": 3}),
            Task(id="b", duration=1, demand={"cpu": 3, "memory_mb": 80}),
            Task(id="c", duration=1, demand={"memory_mb": 80}, depends_on=["a"]),
            Task(id="d", duration=2.5, demand={"memory_mb": 30}),
        ],
        {"a": 0, "b": 0, "c": 1, "d": 0},
        3,  # makespan 2.5; a and b end at 2, c waits for a (enforced) and ends at 3
    ),
}


@pytest.mark.parametrize("case", UNSAFE)
def test_a_valid_unsafe_schedule_has_its_slowed_makespan(case: str) -> None:
    tasks, starts, slowed = UNSAFE[case]
    workflow = flow(*tasks)
    score = evaluate(workflow, CPU3, at(workflow, **starts))
    assert score.valid and not score.safe
    assert score.slowed_makespan == slowed
    row = ScoreRow.from_score(score)
    assert row.slowed_makespan == slowed
    # it earns nothing still: no gap, efficiency 0
    optimum = SolveResult(workflow="w", machine="m", status="optimal", makespan=1, lower_bound=1)
    assert with_reference(score, optimum).gap is None
    assert with_efficiency(row, optimum).efficiency == 0


#: Invalid schedules: a broken dependency or a missing step. Processor sharing starts a step when
#: its predecessors have really ended, so it would time another, repaired schedule: no figure.
INVALID = {"broken dependency": {"a": 0, "b": 0}, "missing step": {"a": 0}}


@pytest.mark.parametrize("case", INVALID)
def test_an_invalid_schedule_has_no_slowed_makespan(case: str) -> None:
    starts = INVALID[case]
    workflow = flow(Task(id="a", duration=1, demand={"cpu": 3}), Task(id="b", duration=1, depends_on=["a"]))
    score = evaluate(workflow, CPU3, at(workflow, **starts))
    assert not score.valid and score.slowed_makespan is None
    assert ScoreRow.from_score(score).slowed_makespan is None
