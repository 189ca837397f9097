"""The data model validates once, on creation, and round-trips losslessly."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from heuristics_helpers import critical_path
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from strategies import workflows

from peakopt.instances import load, render
from peakopt.models import Machine, Schedule, Segment, SolveResult, Suite, Task, Workflow


def wf(*tasks: Task) -> Workflow:
    return Workflow(id="w", tasks=tasks)


def test_constant_task_is_one_segment() -> None:
    task = Task(id="a", duration=2.0, demand={"cpu": 1.0})
    assert task.segments == (Segment(duration=2.0, demand={"cpu": 1.0}),)
    assert task.length == 2.0
    assert task.peak("cpu") == 1.0 and task.peak("gpu") == 0.0


def test_piecewise_task() -> None:
    task = Task(
        id="load",
        profile=[{"duration": 1.5, "demand": {"memory_mb": 6000}}, {"duration": 3.0, "demand": {"cpu": 2}}],
    )
    assert task.length == 4.5
    assert task.resources == {"memory_mb", "cpu"}
    assert task.peak("memory_mb") == 6000.0


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"id": "a"}, "needs a 'duration'"),
        ({"id": "a", "duration": 1, "profile": [{"duration": 1}]}, "has both"),
        ({"id": "a", "profile": []}, "empty 'profile'"),
        ({"id": "a", "duration": -1}, "greater than or equal to 0"),
        ({"id": "a", "duration": math.nan}, "finite number"),
        ({"id": "a", "duration": math.inf}, "finite number"),
        ({"id": "a", "duration": 1, "demand": {"cpu": -0.5}}, "greater than or equal to 0"),
        ({"id": "a", "duration": 1, "depends_on": ["b", "b"]}, "twice"),
        ({"id": "", "duration": 1}, "at least 1 character"),
        ({"id": "a", "duration": 1, "durration": 2}, "Extra inputs"),
    ],
)
def test_task_rules(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Task.model_validate(fields)


def test_workflow_rules() -> None:
    a = Task(id="a", duration=1)
    with pytest.raises(ValidationError, match="duplicate task id 'a'"):
        wf(a, a)
    with pytest.raises(ValidationError, match="depends on unknown task 'z'"):
        wf(Task(id="b", duration=1, depends_on=["z"]))
    with pytest.raises(ValidationError, match="at least 1 item"):
        Workflow(id="w", tasks=())


def test_a_call_names_only_outputs_of_its_predecessors() -> None:
    a = Task(id="a", duration=1, call="fetch(q='x')")
    b = Task(
        id="b-1", duration=1, depends_on=["a"], call="use(x=$a.output.amount, y=$a.output, z='$a.outputs')"
    )
    assert a.consumes == () and b.consumes == ("a",)
    assert wf(a, b).task("b-1").consumes == ("a",)
    c = Task(id="c", duration=1, depends_on=["a"], call="join(x=$a.output, y=$b-1.output)")
    assert c.consumes == ("a", "b-1")
    with pytest.raises(ValidationError, match=r"task 'c': its call uses \$b-1.output but 'b-1' is not in"):
        wf(a, b, c)
    with pytest.raises(ValidationError, match=r"its call uses \$a.output"):
        wf(Task(id="a", duration=1, call="loop(x=$a.output)"))
    assert Task(id="d", duration=1).consumes == ()


def test_cycle_is_named() -> None:
    with pytest.raises(
        ValidationError, match=r"dependency cycle (a -> b -> c -> a|b -> c -> a -> b|c -> a -> b -> c)"
    ):
        wf(
            Task(id="a", duration=1, depends_on=["c"]),
            Task(id="b", duration=1, depends_on=["a"]),
            Task(id="c", duration=1, depends_on=["b"]),
        )
    with pytest.raises(ValidationError, match="dependency cycle a -> a"):
        wf(Task(id="a", duration=1, depends_on=["a"]))


def test_machine_and_suite_rules() -> None:
    with pytest.raises(ValidationError, match="greater than 0"):
        Machine(name="m", capacity={"cpu": 0})
    with pytest.raises(ValidationError, match="greater than 0"):
        Machine(name="m", capacity={"cpu": -2})
    workflow = wf(Task(id="a", duration=1))
    with pytest.raises(ValidationError, match="duplicate workflow id 'w'"):
        Suite(workflows=(workflow, workflow))
    machine = Machine(name="m", capacity={"cpu": 1})
    with pytest.raises(ValidationError, match="duplicate machine name 'm'"):
        Suite(machines=(machine, machine), workflows=(workflow,))


def test_models_are_frozen() -> None:
    task = Task(id="a", duration=1)
    with pytest.raises(ValidationError):
        task.duration = 2


def test_graph_helpers() -> None:
    workflow = wf(Task(id="b", duration=1, depends_on=["a"]), Task(id="a", duration=2, demand={"gpu": 1}))
    assert workflow.edges == [("a", "b")]
    assert workflow.task("a").duration == 2
    assert workflow.resources == {"gpu"}
    assert list(workflow.graph.successors("a")) == ["b"]


def test_solve_result_schedule() -> None:
    result = SolveResult(
        workflow="w", machine="m", status="optimal", makespan=3, lower_bound=3, starts={"a": 0}
    )
    assert result.schedule == Schedule(workflow="w", machine="m", starts={"a": 0.0}, source="cpsat")
    assert SolveResult(workflow="w", status="unknown").schedule is None


@pytest.mark.slow
@given(workflows())
def test_json_round_trip_is_lossless(workflow: Workflow) -> None:
    text = render(Suite(workflows=(workflow,)), "json")
    assert Workflow.model_validate_json(text) == workflow
    assert Workflow.model_validate(json.loads(text)) == workflow


@given(workflows(max_tasks=5))
def test_jsonl_round_trip_is_lossless(tmp_path_factory: pytest.TempPathFactory, workflow: Workflow) -> None:
    other = workflow.model_copy(update={"id": "w2"})
    path = tmp_path_factory.mktemp("rt") / "suite.jsonl"
    path.write_text(render(Suite(workflows=(workflow, other)), "jsonl"))
    assert load(path).workflows == (workflow, other)


NOT_NUMBERS = [True, False, "1.5", "2", [1]]


@pytest.mark.parametrize("value", NOT_NUMBERS)
def test_numbers_are_strict(value: object) -> None:
    # lax pydantic would read True as 1.0 and "1.5" as 1.5 without a word
    with pytest.raises(ValidationError, match="valid number"):
        Task(id="a", duration=value, demand={"cpu": 1})
    with pytest.raises(ValidationError, match="valid number"):
        Task(id="a", duration=1, demand={"cpu": value})
    with pytest.raises(ValidationError, match="valid number"):
        Segment(duration=value)
    with pytest.raises(ValidationError, match="valid number"):
        Machine(name="m", capacity={"cpu": value})


@given(st.one_of(st.integers(0, 10**12), st.floats(0, 1e12)))
def test_ints_and_numpy_numbers_are_still_numbers(value: float) -> None:
    for number in (value, np.float64(value), np.int64(int(value))):
        assert Task(id="a", duration=number).duration == float(number)
        assert Machine(name="m", capacity={"cpu": number + 1}).capacity["cpu"] == float(number + 1)


def test_a_copy_with_changed_fields_recomputes_what_was_cached() -> None:
    task = Task(id="a", duration=1.0, demand={"cpu": 1})
    assert task.segments[0].duration == 1.0  # cached
    longer = task.model_copy(update={"duration": 5.0})
    assert longer.segments[0].duration == 5.0 and longer.length == 5.0
    workflow = Workflow(id="w", tasks=[task])
    assert workflow.index == {"a": 0}  # cached
    assert workflow.critical_path == 1.0 and workflow.topological_order == (0,)  # cached
    other = workflow.model_copy(update={"tasks": (Task(id="b", duration=2.0, depends_on=("a",)), task)})
    assert other.index == {"b": 0, "a": 1} and set(other.graph) == {"a", "b"}
    assert other.topological_order == (1, 0) and other.critical_path == 3.0
    assert other.earliest_starts == (1.0, 0.0)


def test_the_topological_order_keeps_the_task_order_where_it_can() -> None:
    workflow = wf(
        Task(id="c", duration=1, depends_on=["b"]),
        Task(id="a", duration=2),
        Task(id="b", duration=3, depends_on=["a"]),
        Task(id="d", duration=4),
    )
    assert workflow.topological_order == (1, 2, 0, 3)  # a ready first, then b, then c before d
    assert workflow.earliest_starts == (5.0, 0.0, 2.0, 0.0)
    assert workflow.critical_path == 6.0


@given(workflows(max_tasks=10))
def test_one_topological_order_and_critical_path(workflow: Workflow) -> None:
    order = workflow.topological_order
    assert sorted(order) == list(range(len(workflow.tasks)))
    rank = {workflow.tasks[p].id: i for i, p in enumerate(order)}
    assert all(rank[a] < rank[b] for a, b in workflow.edges)
    if order != tuple(range(len(workflow.tasks))):  # moved only where the task order is not topological
        assert any(workflow.index[a] > workflow.index[b] for a, b in workflow.edges)
    assert workflow.critical_path == pytest.approx(critical_path(workflow))  # networkx, independently
    for task, start in zip(workflow.tasks, workflow.earliest_starts, strict=True):
        ends = [
            workflow.earliest_starts[workflow.index[p]] + workflow.task(p).length for p in task.depends_on
        ]
        assert start == max(ends, default=0.0)
