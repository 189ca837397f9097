"""The event-driven simulator: each execution policy against its definition and a unit-grid simulation."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from simulate_helpers import Chooser, clamped_peak, factors, grid, realise, verdict
from strategies import machines, schedules, workflows

from peakopt.instances import load
from peakopt.models import Edge, Machine, Schedule, Task, Workflow
from peakopt.oracle.answers.parse import Parsed
from peakopt.oracle.answers.replay import replay
from peakopt.oracle.uncertain.dispatch import SimulationError, dispatch
from peakopt.oracle.uncertain.flows import pos_safe, resource_flow_edges
from peakopt.oracle.uncertain.names import EXECUTIONS, Execution
from peakopt.oracle.uncertain.scenarios import Noise, draw
from peakopt.oracle.uncertain.simulate import Simulation, execute
from peakopt.solver.heuristics import run


def _plan(workflow: Workflow, starts: dict[str, float], edges: tuple[Edge, ...] = ()) -> Schedule:
    return Schedule(workflow=workflow.id, machine="m", starts=starts, edges=edges)


def _lengths(workflow: Workflow) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(0, 8), min_size=len(workflow.tasks), max_size=len(workflow.tasks))


@st.composite
def instances(draw: st.DrawFn, integer: bool = True, piecewise: bool = True) -> tuple[Workflow, Machine]:
    """A random workflow and machine."""
    return draw(workflows(integer=integer, piecewise=piecewise)), draw(machines(integer=integer))


@st.composite
def forward_edges(draw: st.DrawFn, workflow: Workflow) -> tuple[Edge, ...]:
    """Extra edges that go forward in the topological order (never a cycle)."""
    order = [workflow.tasks[j].id for j in workflow.topological_order]
    pairs = [(a, b) for i, a in enumerate(order) for b in order[i + 1 :]]
    return tuple(draw(st.lists(st.sampled_from(pairs), unique=True, max_size=6))) if pairs else ()


def _fits(peak: dict[str, float], free: dict[str, float]) -> bool:
    return all(free[r] >= amount for r, amount in peak.items())


def _take(peak: dict[str, float], free: dict[str, float]) -> None:
    for r, amount in peak.items():
        free[r] -= amount


def _priority(workflow: Workflow, plan: Schedule) -> list[str]:
    """The plan's order made precedence-feasible: the earliest-planned step whose predecessors are listed."""
    rank = {workflow.tasks[j].id: r for r, j in enumerate(workflow.topological_order)}
    listed: list[str] = []
    while len(listed) < len(workflow.tasks):
        eligible = [t.id for t in workflow.tasks if t.id not in listed and set(t.depends_on) <= set(listed)]
        listed.append(min(eligible, key=lambda s: (plan.starts[s], rank[s])))
    return listed


def _order_chooser(workflow: Workflow, machine: Machine, plan: Schedule, *, greedy: bool) -> Chooser:
    sequence = _priority(workflow, plan)
    peaks = {t.id: clamped_peak(t, machine) for t in workflow.tasks}
    started: set[str] = set()

    def choose(now: int, ready: list[str], running: dict[str, int], free: dict[str, float]) -> list[str]:
        left, chosen = dict(free), []
        for step in sequence if not greedy else [s for s in sequence if s in ready]:
            if step in started:
                continue
            if step in ready and _fits(peaks[step], left):
                _take(peaks[step], left)
                chosen.append(step)
            elif not greedy:
                break
        started.update(chosen)
        return chosen

    return choose


@given(instances(), st.data())
def test_every_policy_matches_a_unit_grid_simulation(
    instance: tuple[Workflow, Machine], data: st.DataObject
) -> None:
    workflow, machine = instance
    plan = data.draw(schedules(workflow, integer=True))
    edges = data.draw(forward_edges(workflow))
    plan = _plan(workflow, plan.starts, edges)
    lengths = data.draw(_lengths(workflow))

    def by_plan(now: int, ready: list[str], running: dict[str, int], free: dict[str, float]) -> list[str]:
        return [s for s in ready if plan.starts[s] <= now]

    expected = {
        "enforced": grid(workflow, machine, lengths, by_plan),
        "pos": grid(workflow, machine, lengths, lambda now, ready, running, free: ready, extra=edges),
        "order": grid(workflow, machine, lengths, _order_chooser(workflow, machine, plan, greedy=False)),
    }
    for policy, starts in expected.items():
        got = Simulation(workflow, machine, policy, plan).run(lengths)  # type: ignore[arg-type]
        assert dict(zip(workflow.index, got, strict=True)) == starts, policy
    greedy = grid(workflow, machine, lengths, _order_chooser(workflow, machine, plan, greedy=True))
    got = Simulation(workflow, machine, "order", plan, greedy=True).run(lengths)
    assert dict(zip(workflow.index, got, strict=True)) == greedy
    assert Simulation(workflow, machine, "literal", plan).run(lengths) == [
        plan.starts[t.id] for t in workflow.tasks
    ]


@given(instances(integer=False), st.data())
def test_enforced_and_pos_never_break_a_dependency(
    instance: tuple[Workflow, Machine], data: st.DataObject
) -> None:
    workflow, machine = instance
    plan = _plan(workflow, data.draw(schedules(workflow)).starts, data.draw(forward_edges(workflow)))
    realised = realise(workflow, data.draw(factors(workflow)))
    for policy in ("enforced", "pos"):
        done = execute(realised, machine, policy, plan, nominal=workflow)
        assert verdict(realised, machine, done)[1] == 0, policy
    pos = execute(realised, machine, "pos", plan, nominal=workflow).starts
    for a, b in plan.edges:
        assert pos[b] >= pos[a] + realised.task(a).length


@given(instances(integer=False), st.data())
def test_at_nominal_durations_literal_is_the_plan_and_enforced_is_replay_runtime(
    instance: tuple[Workflow, Machine], data: st.DataObject
) -> None:
    workflow, machine = instance
    plan = _plan(workflow, data.draw(schedules(workflow)).starts)
    assert execute(workflow, machine, "literal", plan).starts == plan.starts
    runtime = replay(workflow, Parsed(values=dict(plan.starts), kind="start"), mode="runtime")
    assert execute(workflow, machine, "enforced", plan).starts == runtime.starts


def _earliest(workflow: Workflow, edges: tuple[Edge, ...]) -> dict[str, float]:
    """Earliest starts under dependencies plus edges, by longest paths (relaxation until stable)."""
    preds = {t.id: list(t.depends_on) for t in workflow.tasks}
    for a, b in edges:
        preds[b].append(a)
    start = {t.id: 0.0 for t in workflow.tasks}
    for _ in workflow.tasks:
        for t in workflow.tasks:
            start[t.id] = max([0.0, *(start[p] + workflow.task(p).length for p in preds[t.id])])
    return start


@given(instances(integer=False), st.data())
def test_pos_reproduces_the_earliest_starts_of_its_partial_order(
    instance: tuple[Workflow, Machine], data: st.DataObject
) -> None:
    workflow, machine = instance
    edges = data.draw(forward_edges(workflow))
    earliest = _earliest(workflow, edges)
    done = execute(workflow, machine, "pos", _plan(workflow, earliest, edges))
    assert done.starts == pytest.approx(earliest, rel=1e-12, abs=1e-12)


@given(
    instances(integer=True, piecewise=False),
    st.sampled_from(["best:fast", "sgs:serial:random", "sgs:serial:lft"]),
)
def test_order_at_nominal_durations_never_starts_a_step_later_than_a_safe_plan(
    instance: tuple[Workflow, Machine], method: str
) -> None:
    # the activity-based order (the default) cannot fall behind a plan that holds peaks safely;
    # integer data, so that the plan has no overlap within the heuristics' time tolerance
    workflow, machine = instance
    plan = run(workflow, machine, method, seed=3)
    done = execute(workflow, machine, "order", plan)
    scale = max([1.0, *(plan.starts[t.id] + t.length for t in workflow.tasks)])
    for step, at in done.starts.items():
        assert at <= plan.starts[step] + 1e-9 * scale
    assert verdict(workflow, machine, done) == (0.0, 0)


def _all_pairs_edges(workflow: Workflow, plan: Schedule) -> tuple[Edge, ...]:
    """Every (a, b) with a ending before b starts in the plan: a partial order safe for any durations."""
    ends = {t.id: plan.starts[t.id] + t.length for t in workflow.tasks}
    rank = {workflow.tasks[j].id: r for r, j in enumerate(workflow.topological_order)}

    def first(a: str, b: str) -> bool:  # zero-length steps at one instant: by topological rank
        return ends[a] <= plan.starts[b] and (ends[b] > plan.starts[a] or rank[a] < rank[b])

    return tuple((a, b) for a in ends for b in ends if a != b and first(a, b))


@given(instances(integer=True, piecewise=False), st.data())
def test_order_and_pos_never_overflow_an_avoidable_capacity(
    instance: tuple[Workflow, Machine], data: st.DataObject
) -> None:
    workflow, machine = instance
    plan = run(workflow, machine, "best:fast")
    plan = _plan(workflow, plan.starts, _all_pairs_edges(workflow, plan))
    realised = realise(workflow, data.draw(factors(workflow, spread=0.9)))
    runs = [
        execute(realised, machine, "order", plan, nominal=workflow),
        execute(realised, machine, "order", plan, nominal=workflow, greedy=True),
        execute(realised, machine, "pos", plan, nominal=workflow),
    ]
    for done in runs:
        assert verdict(realised, machine, done) == (0.0, 0), done.meta


@given(instances(integer=False), st.data())
def test_order_stays_safe_with_piecewise_profiles(
    instance: tuple[Workflow, Machine], data: st.DataObject
) -> None:
    # peaks are held for the whole run, so a profile's shape never lets two steps overflow together
    workflow, machine = instance
    plan = _plan(workflow, data.draw(schedules(workflow)).starts)
    realised = realise(workflow, data.draw(factors(workflow)))
    for greedy in (False, True):
        done = execute(realised, machine, "order", plan, nominal=workflow, greedy=greedy)
        avoidable, broken = verdict(realised, machine, done)
        assert broken == 0
        assert avoidable == pytest.approx(0.0, abs=1e-9)


def _wf(*tasks: Task) -> Workflow:
    return Workflow(id="w", tasks=tasks)


MACHINE = Machine(name="m", capacity={"cpu": 2.0})
PAIR = _wf(
    Task(id="a", duration=2.0, demand={"cpu": 1.0}),
    Task(id="b", duration=2.0, demand={"cpu": 1.0}),
    Task(id="c", duration=1.0, demand={"cpu": 1.0}, depends_on=("a",)),
)


def test_literal_breaks_a_dependency_when_a_predecessor_runs_long() -> None:
    plan = _plan(PAIR, {"a": 0.0, "b": 0.0, "c": 2.0})
    realised = realise(PAIR, [1.5, 1.0, 1.0])
    assert verdict(realised, MACHINE, execute(realised, MACHINE, "literal", plan, nominal=PAIR))[1] == 1
    assert execute(realised, MACHINE, "enforced", plan, nominal=PAIR).starts["c"] == 3.0


def test_order_admits_by_nominal_demand_so_a_larger_realised_demand_can_overflow() -> None:
    plan = _plan(PAIR, {"a": 0.0, "b": 0.0, "c": 2.0})
    realised = realise(PAIR, [1.0, 1.0, 1.0], scales=[1.5, 1.0, 1.0])
    done = execute(realised, MACHINE, "order", plan, nominal=PAIR)
    assert done.starts == {"a": 0.0, "b": 0.0, "c": 2.0}
    assert verdict(realised, MACHINE, done)[0] == pytest.approx(0.5)


def test_an_over_capacity_step_runs_alone_and_order_does_not_deadlock() -> None:
    workflow = _wf(
        Task(id="big", duration=1.0, demand={"cpu": 5.0}), Task(id="small", duration=1.0, demand={"cpu": 1.0})
    )
    plan = _plan(workflow, {"big": 0.0, "small": 0.0})
    for greedy in (False, True):
        done = execute(workflow, MACHINE, "order", plan, greedy=greedy)
        assert done.starts == {"big": 0.0, "small": 1.0}


def test_greedy_order_lets_a_later_step_overtake_and_strict_order_does_not() -> None:
    # a, then b needing the whole machine; c is planned after b but ready at once
    workflow = _wf(
        Task(id="a", duration=1.0, demand={}),
        Task(id="b", duration=3.0, demand={"cpu": 2.0}, depends_on=("a",)),
        Task(id="c", duration=2.0, demand={"cpu": 1.0}),
    )
    plan = _plan(workflow, {"a": 0.0, "b": 1.0, "c": 4.0})
    assert execute(workflow, MACHINE, "order", plan).starts == plan.starts
    assert execute(workflow, MACHINE, "order", plan, greedy=True).starts == {"a": 0.0, "b": 2.0, "c": 0.0}


def test_a_plan_must_cover_the_workflow_and_edges_must_be_acyclic() -> None:
    with pytest.raises(SimulationError, match="needs a plan"):
        Simulation(PAIR, MACHINE, "enforced")
    with pytest.raises(SimulationError, match=r"no start for 'c'"):
        Simulation(PAIR, MACHINE, "order", _plan(PAIR, {"a": 0.0, "b": 0.0}))
    with pytest.raises(SimulationError, match="for workflow 'x'"):
        Simulation(PAIR, MACHINE, "literal", Schedule(workflow="x", starts={}))
    cyclic = _plan(PAIR, {"a": 0.0, "b": 0.0, "c": 2.0}, (("c", "a"),))
    with pytest.raises(SimulationError, match="form a cycle through 'a', 'c'"):
        Simulation(PAIR, MACHINE, "pos", cyclic)
    with pytest.raises(SimulationError, match="unknown step 'z'"):
        Simulation(PAIR, MACHINE, "pos", _plan(PAIR, {"a": 0.0, "b": 0.0, "c": 2.0}, (("a", "z"),)))
    with pytest.raises(SimulationError, match="unknown execution 'late'"):
        Simulation(PAIR, MACHINE, "late", _plan(PAIR, {}))  # type: ignore[arg-type]
    with pytest.raises(SimulationError, match="one value per task"):
        Simulation(PAIR, MACHINE, "pos", _plan(PAIR, {"a": 0.0, "b": 0.0, "c": 2.0})).run([1.0])
    assert EXECUTIONS == ("literal", "enforced", "order", "pos")


def test_enforced_starts_a_plan_with_negative_starts_at_zero() -> None:
    done = execute(PAIR, MACHINE, "enforced", _plan(PAIR, {"a": -1.0, "b": 0.5, "c": 0.0}))
    assert done.starts == {"a": 0.0, "b": 0.5, "c": 2.0}
    assert not math.isnan(done.starts["c"])


@given(instances(integer=False), st.sampled_from(["best:fast", "sgs:parallel:lft", "admission"]), st.data())
def test_pos_with_the_flow_edges_of_a_peak_safe_plan_never_overflows(
    instance: tuple[Workflow, Machine], method: str, data: st.DataObject
) -> None:
    # the order execution at nominal durations holds peaks, so its schedule has resource flows
    workflow, machine = instance
    held = execute(workflow, machine, "order", run(workflow, machine, method))
    plan = _plan(workflow, held.starts, resource_flow_edges(workflow, machine, held.starts))
    assert pos_safe(workflow, machine, plan.edges)
    realised = realise(workflow, data.draw(factors(workflow, spread=0.9)))
    avoidable, broken = verdict(realised, machine, execute(realised, machine, "pos", plan, nominal=workflow))
    assert broken == 0
    assert avoidable == pytest.approx(0.0, abs=1e-9)


def test_a_compiled_simulation_runs_the_sampled_scenarios_the_oracle_then_scores() -> None:
    suite = load("bundled:default")
    machine = suite.machine("small")
    for workflow in suite.workflows[:12]:
        plan = run(workflow, machine, "best:fast")
        plan = _plan(workflow, plan.starts, resource_flow_edges(workflow, machine, plan.starts))
        scenarios = draw(workflow, 20, seed=1, noise=Noise(duration=0.25))
        policies: tuple[Execution, ...] = ("enforced", "order", "pos")
        simulations = {p: Simulation(workflow, machine, p, plan) for p in policies}
        for k in range(len(scenarios)):
            realised = scenarios.workflow(k)
            for policy, simulation in simulations.items():
                starts = simulation.run(scenarios.lengths[k], scenarios.scales[k])
                avoidable, broken = verdict(realised, machine, simulation.schedule(starts))
                assert broken == 0, policy
                if policy != "enforced":
                    assert avoidable == pytest.approx(0.0, abs=1e-9), policy
                assert starts == list(
                    execute(realised, machine, policy, plan, nominal=workflow).starts.values()
                )


def test_order_of_a_plan_that_breaks_a_dependency_runs_the_predecessor_first() -> None:
    # hypothesis found it: sorted by planned start, "b" (planned at 0) waited for its own
    # predecessor "a" (planned at 1), which the strict order never reached: a stall
    workflow = _wf(
        Task(id="a", duration=1.0, demand={"cpu": 1.0}), Task(id="b", duration=1.0, depends_on=("a",))
    )
    plan = _plan(workflow, {"a": 1.0, "b": 0.0})
    for greedy in (False, True):
        assert execute(workflow, MACHINE, "order", plan, greedy=greedy).starts == {"a": 0.0, "b": 1.0}


def test_no_step_starts_before_a_predecessor_ends_when_completions_nearly_coincide() -> None:
    # found by hypothesis: t1 ends at 8.0 and t4 at 7.999999999999999, one instant within the
    # tolerance; the successors of t1 started at the earlier time, a hair before t1 ended
    lengths = [8.0, 7.999999999999999, 0.0]
    starts = dispatch(
        lengths, [[], [], [0]], [[2], [], []], [(), (), ()], [1.0], lambda _now, ready, _r, _f: ready
    )
    assert starts[2] >= starts[0] + lengths[0]
