"""Resource-flow edges and the safety check of partial-order schedules (peakopt.oracle.uncertain.flows)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from strategies import machines, workflows

from peakopt.models import Edge, Machine, Schedule, Task, Workflow
from peakopt.oracle import TOLERANCE, SimulationError, evaluate
from peakopt.oracle.uncertain.flows import (
    PREFER,
    Prefer,
    pos_earliest_starts,
    pos_overflow,
    pos_safe,
    resource_flow_edges,
)
from peakopt.solver.heuristics import best_schedule
from peakopt.solver.robust import peak_workflow


def decimal(x: float) -> Fraction:
    """The number as its author wrote it (the oracle reads floats so)."""
    return Fraction(repr(x))


def closure(workflow: Workflow, edges: tuple[Edge, ...]) -> dict[str, set[str]]:
    """Per step, every step that must end before it starts (dependencies plus edges, transitively)."""
    before: dict[str, set[str]] = {t.id: set(t.depends_on) for t in workflow.tasks}
    for a, b in edges:
        before[b].add(a)
    changed = True
    while changed:
        changed = False
        for step, earlier in before.items():
            grown = earlier.union(*(before[e] for e in earlier))
            if grown != earlier:
                before[step], changed = grown, True
    return before


def held_peak(task: Task, resource: str, capacity: float) -> Fraction:
    """The largest demand over the segments of positive length, clamped to the capacity."""
    peak = max(
        (decimal(s.demand.get(resource, 0.0)) for s in task.segments if s.duration > 0), default=Fraction(0)
    )
    return min(peak, decimal(capacity)) if peak > decimal(capacity) * (1 + Fraction(1, 10**12)) else peak


def brute_force_safe(workflow: Workflow, machine: Machine, edges: tuple[Edge, ...]) -> bool:
    """No set of pairwise unordered steps needs more than a capacity at its clamped peaks."""
    before = closure(workflow, edges)
    ids = [t.id for t in workflow.tasks]
    for resource, capacity in machine.capacity.items():
        room = decimal(capacity) * (1 + Fraction(1, 10**12))
        peaks = {t.id: held_peak(t, resource, capacity) for t in workflow.tasks}
        for size in range(2, len(ids) + 1):
            for steps in itertools.combinations(ids, size):
                unordered = all(
                    a not in before[b] and b not in before[a] for a, b in itertools.combinations(steps, 2)
                )
                if unordered and sum(peaks[s] for s in steps) > room:
                    return False
    return True


@st.composite
def extra_edges(draw: st.DrawFn, workflow: Workflow) -> tuple[Edge, ...]:
    """Random edges along a random topological order of the workflow (so never a cycle)."""
    order = [workflow.tasks[i].id for i in workflow.topological_order]
    pairs = [(a, b) for k, a in enumerate(order) for b in order[k + 1 :]]
    return tuple(draw(st.lists(st.sampled_from(pairs), unique=True, max_size=6))) if pairs else ()


@settings(max_examples=150)
@given(st.data(), workflows(max_tasks=6), machines())
def test_pos_safe_agrees_with_brute_force_antichains(
    data: st.DataObject, workflow: Workflow, machine: Machine
) -> None:
    edges = data.draw(extra_edges(workflow))
    expected = brute_force_safe(workflow, machine, edges)
    assert pos_safe(workflow, machine, edges) is expected
    overflow = pos_overflow(workflow, machine, edges)
    assert (overflow is None) is expected
    if overflow is not None:  # the witness is an antichain over the capacity
        before = closure(workflow, edges)
        assert all(
            a not in before[b] and b not in before[a] for a, b in itertools.combinations(overflow.steps, 2)
        )
        capacity = machine.capacity[overflow.resource]
        load = sum(held_peak(workflow.task(s), overflow.resource, capacity) for s in overflow.steps)
        assert load > decimal(capacity) * (1 + Fraction(1, 10**12))


def check_flow(
    workflow: Workflow, machine: Machine, starts: dict[str, float], prefer: Prefer = "most"
) -> None:
    """The flow edges of a schedule of the peak problem make a safe POS no later than it."""
    try:
        edges = resource_flow_edges(workflow, machine, starts, prefer=prefer)
    except ValueError:
        # refused only when a step too short for the oracle to see overlaps another by a hair
        scale = max(starts[t.id] + t.length for t in workflow.tasks)
        assert any(0 < t.length <= TOLERANCE * scale for t in workflow.tasks)
        return
    assert pos_safe(workflow, machine, edges)
    assert brute_force_safe(workflow, machine, edges) or len(workflow.tasks) > 7
    implied = closure(workflow, ())
    lengths = {t.id: sum(decimal(s.duration) for s in t.segments) for t in workflow.tasks}
    for a, b in edges:
        assert a not in implied[b], "an edge the dependencies already imply"
        assert decimal(starts[a]) + lengths[a] <= decimal(starts[b]) * (1 + Fraction(1, 10**9)) + Fraction(
            1, 10**9
        )
    # no edge is implied by the others (a transitive reduction of the added edges)
    for edge in edges:
        rest = tuple(e for e in edges if e != edge)
        assert edge[0] not in closure(workflow, rest)[edge[1]]
    pos = pos_earliest_starts(workflow, edges)
    assert all(pos[t] <= starts[t] + 1e-9 * (1 + starts[t]) for t in starts)


def _linked_twice() -> Workflow:
    """Found by hypothesis: a step linked to a giver must also follow what the giver follows.

    Without that, a later step links again to a step it already follows (a redundant edge).
    """
    one = {"cpu": 3.0}
    tasks = [
        Task(id="t0", duration=0.0),
        Task(id="t4", depends_on=("t0", "t1"), profile=[{"duration": 2.0, "demand": {"cpu": 2.0}}]),
        Task(id="t2", depends_on=("t0",), duration=1.0, demand=one),
        Task(id="t3", depends_on=("t0",), profile=[{"duration": 2.0, "demand": {"cpu": 2.0}}]),
        Task(id="t1", depends_on=("t0",), duration=1.0, demand=one),
        Task(id="t5", depends_on=("t0", "t1", "t2", "t3", "t4"), duration=0.0),
        Task(id="t6", depends_on=("t0", "t1", "t2", "t3", "t4", "t5"), profile=[{"duration": 0.0}]),
    ]
    return Workflow(id="w", tasks=tasks)


def _hair() -> Workflow:
    """Found by hypothesis: a step too short for the oracle to see, a hair after another's start."""
    hair = 1.1232884286155833e-94
    tasks = [
        Task(id="t0", duration=1.0, demand={"memory_mb": 1.0}),
        Task(id="t1", profile=[{"duration": hair}]),
        Task(id="t2", depends_on=("t1",), profile=[{"duration": hair, "demand": {"memory_mb": 1.0}}]),
    ]
    return Workflow(id="w", tasks=tasks)


@settings(max_examples=80)
@given(workflows(max_tasks=7), machines(), st.sampled_from(PREFER))
@example(_linked_twice(), Machine(name="m", capacity={"cpu": 3.0}), "most")
@example(_hair(), Machine(name="m", capacity={"memory_mb": 1.0}), "most")
def test_flow_edges_of_a_heuristic_schedule_give_a_safe_pos(
    workflow: Workflow, machine: Machine, prefer: Prefer
) -> None:
    # a safe schedule of the peak problem: every step holds its peak for its whole run
    schedule = best_schedule(peak_workflow(workflow), machine, effort="fast")
    check_flow(workflow, machine, schedule.starts, prefer)


@settings(max_examples=40)
@given(workflows(max_tasks=7, integer=True, piecewise=False), machines(integer=True))
def test_any_safe_schedule_of_constant_profiles_has_a_flow(workflow: Workflow, machine: Machine) -> None:
    schedule = best_schedule(workflow, machine, effort="fast")
    assert evaluate(workflow, machine, schedule).safe
    check_flow(workflow, machine, schedule.starts)


def chain_machine() -> tuple[Workflow, Machine]:
    tasks = [
        Task(id="a", duration=2, demand={"cpu": 2}),
        Task(id="b", duration=2, demand={"cpu": 2}),
        Task(id="c", duration=2, demand={"cpu": 2}),
        Task(id="z", duration=0, demand={"cpu": 9}),
    ]
    return Workflow(id="w", tasks=tasks), Machine(name="m", capacity={"cpu": 2})


def test_a_serial_schedule_is_chained_without_implied_edges() -> None:
    workflow, machine = chain_machine()
    edges = resource_flow_edges(workflow, machine, {"a": 0, "b": 2, "c": 4, "z": 1})
    assert edges == (("a", "b"), ("b", "c"))  # (a, c) follows; the zero-length z holds nothing
    assert pos_earliest_starts(workflow, edges) == {"a": 0.0, "b": 2.0, "c": 4.0, "z": 0.0}


def test_slack_links_to_the_step_that_ended_first() -> None:
    tasks = [
        Task(id="a", duration=1, demand={"cpu": 1}),
        Task(id="b", duration=3, demand={"cpu": 1}),
        Task(id="c", duration=1, demand={"cpu": 1}),
    ]
    workflow, machine = Workflow(id="w", tasks=tasks), Machine(name="m", capacity={"cpu": 2})
    starts = {"a": 0, "b": 0, "c": 3}
    assert resource_flow_edges(workflow, machine, starts, prefer="slack") == (("a", "c"),)
    assert resource_flow_edges(workflow, machine, starts) in ((("a", "c"),), (("b", "c"),))


def test_a_schedule_over_a_peak_is_refused_naming_the_step_and_resource() -> None:
    workflow, machine = chain_machine()
    with pytest.raises(ValueError, match=r"step 'b' at 1 s needs 2 cpu"):
        resource_flow_edges(workflow, machine, {"a": 0, "b": 1, "c": 4, "z": 0})
    with pytest.raises(ValueError, match="has no start"):
        resource_flow_edges(workflow, machine, {"a": 0})


def test_a_piecewise_step_is_charged_its_peak_for_its_whole_run() -> None:
    spike = Task(
        id="s", profile=[{"duration": 1, "demand": {"cpu": 2}}, {"duration": 3, "demand": {"cpu": 1}}]
    )
    workflow = Workflow(id="w", tasks=[spike, Task(id="t", duration=1, demand={"cpu": 1})])
    machine = Machine(name="m", capacity={"cpu": 2})
    # safe as a timetable (t runs beside the tail), but a longer spike would meet t
    assert evaluate(workflow, machine, _schedule(workflow, {"s": 0, "t": 1})).safe
    overflow = pos_overflow(workflow, machine, ())
    assert overflow is not None and overflow.steps == ("s", "t") and overflow.load == 3
    assert "steps s, t are unordered" in str(overflow)
    with pytest.raises(ValueError, match="step 't' at 1 s needs 1 cpu"):
        resource_flow_edges(workflow, machine, {"s": 0, "t": 1})
    assert resource_flow_edges(workflow, machine, {"s": 0, "t": 4}) == (("s", "t"),)


def test_edges_naming_unknown_steps_or_closing_a_cycle_are_refused() -> None:
    workflow, machine = chain_machine()
    with pytest.raises(SimulationError, match="unknown step 'q'"):
        pos_safe(workflow, machine, (("a", "q"),))
    with pytest.raises(SimulationError, match="form a cycle"):
        pos_earliest_starts(workflow, (("a", "b"), ("b", "a")))


def _schedule(workflow: Workflow, starts: dict[str, float]) -> Schedule:
    return Schedule(workflow=workflow.id, machine="m", starts=starts)
