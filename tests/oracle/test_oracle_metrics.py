"""The metrics module: every metric of the design's table by name, the figures evaluate reports."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import machines, schedules, workflows

from peakopt.instances import load
from peakopt.models import Machine, SolveResult, Workflow
from peakopt.oracle import evaluate, with_reference
from peakopt.oracle.judge import metrics
from peakopt.oracle.judge.metrics import measure

SUITE = load("bundled:refund")
REFUND, WORKER = SUITE.workflows[0], SUITE.machine("worker")
ASAP = dict.fromkeys(REFUND.index, 0.0) | {"decide": 4.8}  # 5.4 s, overflows memory by 0.55 s

#: The design's metric table, in its order (efficiency is issue 14's).
TABLE = (
    "makespan",
    "cva",
    "cva_floor",
    "avoidable_cva",
    "safe",
    "mru",
    "strict_mru",
    "safe_mru",
    "gap",
    "gap_vs_lb",
    "gap_vs_ub",
    "dependency_violations",
)
#: The metrics of a measured schedule (the gaps compare a makespan with a reference instead).
OF_A_SCHEDULE = tuple(name for name in TABLE if not name.startswith("gap"))


@pytest.mark.parametrize("name", TABLE)
def test_every_metric_of_the_table_is_a_function_of_the_metrics_module(name: str) -> None:
    function = getattr(metrics, name)
    assert callable(function) and function.__module__ == "peakopt.oracle.judge.metrics"
    assert function.__doc__


def test_the_refund_asap_schedule_by_hand() -> None:
    measured = measure(REFUND, WORKER, ASAP)
    assert metrics.makespan(measured) == pytest.approx(5.4)
    assert metrics.cva(measured) == pytest.approx(0.55) == metrics.avoidable_cva(measured)
    assert metrics.cva_floor(measured) == 0
    assert metrics.valid(measured) and not metrics.safe(measured)
    assert metrics.dependency_violations(measured) == 0
    mru = metrics.mru(measured)
    assert mru is not None and 0 < mru <= 1
    assert metrics.strict_mru(measured) == 0 and metrics.safe_mru(measured) == 0


def test_broken_dependencies_are_counted_and_make_the_schedule_invalid() -> None:
    measured = measure(REFUND, WORKER, dict.fromkeys(REFUND.index, 0.0))  # decide with the four
    assert metrics.dependency_violations(measured) == 4
    assert not metrics.valid(measured) and not metrics.safe(measured)


def test_no_start_measures_no_schedule() -> None:
    measured = measure(REFUND, WORKER)
    assert metrics.makespan(measured) == 0 and metrics.mru(measured) is None  # a span of 0
    assert [kind for kind, _ in measured.unfit] == ["missing"] * len(REFUND.tasks)


def test_the_gaps_by_name() -> None:
    optimum = SolveResult(
        workflow="refund", machine="worker", status="optimal", makespan=8.0, lower_bound=8.0
    )
    bounded = optimum.model_copy(update={"status": "feasible", "makespan": 10.0, "lower_bound": 8.0})
    assert metrics.gap(9.0, optimum) == pytest.approx(0.125)
    assert metrics.gap(9.0, bounded) is None  # no proven optimum
    assert metrics.gap_vs_lb(9.0, bounded) == pytest.approx(0.125)
    assert metrics.gap_vs_ub(9.0, bounded) == pytest.approx(-0.1)
    assert metrics.gaps(9.0, bounded) == (
        None,
        metrics.gap_vs_lb(9.0, bounded),
        metrics.gap_vs_ub(9.0, bounded),
    )


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_evaluate_reports_the_metrics_of_the_module(data: st.DataObject) -> None:
    workflow: Workflow = data.draw(workflows(max_tasks=6))
    machine: Machine = data.draw(machines())
    schedule = data.draw(schedules(workflow))
    measured = measure(workflow, machine, schedule.starts)
    score = evaluate(workflow, machine, schedule)
    for name in OF_A_SCHEDULE:
        assert getattr(score, name) == getattr(metrics, name)(measured), name
    assert score.valid == metrics.valid(measured)
    reference = SolveResult(
        workflow=workflow.id, machine=machine.name, status="optimal", makespan=1.0, lower_bound=1.0
    )
    judged = with_reference(score, reference)
    expected = metrics.gaps(score.makespan, reference) if score.safe else (None, None, None)
    assert (judged.gap, judged.gap_vs_lb, judged.gap_vs_ub) == expected


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_cva_floor_depends_on_the_instance_alone(data: st.DataObject) -> None:
    workflow: Workflow = data.draw(workflows(max_tasks=6))
    machine: Machine = data.draw(machines())
    schedule = data.draw(schedules(workflow))
    measured = measure(workflow, machine, schedule.starts)
    assert metrics.cva_floor(measured) == metrics.cva_floor(measure(workflow, machine))
    per_task = [metrics.task_floor(workflow, r, c) for r, c in machine.capacity.items()]
    assert metrics.cva_floor(measured) == pytest.approx(sum(sum(floors.values()) for floors in per_task))
    if metrics.valid(measured):
        assert metrics.cva(measured) >= metrics.cva_floor(measured) - 1e-9 * max(1.0, metrics.cva(measured))
