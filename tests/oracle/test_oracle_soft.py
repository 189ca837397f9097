"""Soft and hard resources: every path that decides "safe" agrees, and nothing changes without ``soft``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from strategies import machines, schedules, workflows

from peakopt.models import Machine, Schedule, SolveResult, Workflow, content_hash, nominal_hash
from peakopt.oracle import evaluate, score_batch
from peakopt.oracle.judge.evaluate import with_reference
from peakopt.oracle.uncertain.scenarios import Noise, draw
from peakopt.oracle.vector.realised import RealisedScorer


def soft_cpu(machine: Machine) -> Machine:
    return machine.model_copy(update={"soft": ("cpu",) if "cpu" in machine.capacity else ()})


def without_cpu(machine: Machine) -> Machine:
    return Machine(name=machine.name, capacity={r: c for r, c in machine.capacity.items() if r != "cpu"})


def valid_schedule(workflow: Workflow, schedule: Schedule) -> Schedule:
    """``schedule`` with each step pushed after its predecessors' ends (dependency-valid)."""
    starts = dict(schedule.starts)
    for index in workflow.topological_order:
        task = workflow.tasks[index]
        ready = max((starts[p] + workflow.task(p).length for p in task.depends_on), default=0.0)
        starts[task.id] = max(starts[task.id], ready)
    return schedule.model_copy(update={"starts": starts})


@st.composite
def instances(draw: st.DrawFn) -> tuple[Workflow, Machine, Schedule]:
    integer = draw(st.booleans())
    workflow = draw(workflows(integer=integer))
    machine = draw(machines(integer=integer))
    schedule = draw(schedules(workflow, integer=integer))
    if draw(st.booleans()):
        schedule = valid_schedule(workflow, schedule)
    return workflow, machine, schedule


OPTIMUM = SolveResult(workflow="w", machine="m", status="optimal", makespan=1.0, lower_bound=1.0)


@settings(max_examples=150, deadline=None)
@given(instances())
def test_without_soft_every_metric_is_as_before(instance: tuple[Workflow, Machine, Schedule]) -> None:
    workflow, machine, schedule = instance
    score = evaluate(workflow, machine, schedule)
    # the old definitions: safe on every resource, no slowdown, gaps from the makespan
    assert score.safe == (score.valid and score.avoidable_cva == 0)
    assert score.slowed_makespan == (score.makespan if score.valid else None)
    assert score.avoidable_cva_hard == score.avoidable_cva and score.avoidable_cva_soft == 0
    assert all(r.kind == "hard" for r in score.resources.values())
    judged = with_reference(score, OPTIMUM)
    if score.safe:
        assert judged.gap == score.makespan - 1.0
    # declaring cpu soft and judging it hard gives exactly the same score
    assert evaluate(workflow, soft_cpu(machine), schedule, soft_as_hard=True) == score


@settings(max_examples=150, deadline=None)
@given(instances())
def test_soft_cpu_is_safe_as_if_cpu_were_no_constraint(instance: tuple[Workflow, Machine, Schedule]) -> None:
    workflow, machine, schedule = instance
    soft = evaluate(workflow, soft_cpu(machine), schedule)
    assert soft.safe == evaluate(workflow, without_cpu(machine), schedule).safe
    plain = evaluate(workflow, machine, schedule)
    # PeakBench's figures stay over every resource
    assert (soft.cva, soft.avoidable_cva, soft.strict_mru) == (
        plain.cva,
        plain.avoidable_cva,
        plain.strict_mru,
    )
    assert soft.avoidable_cva_hard + soft.avoidable_cva_soft == pytest.approx(soft.avoidable_cva)
    assert (soft.slowed_makespan is None) == (not soft.valid)  # an unsafe schedule's too
    if soft.slowed_makespan is not None:
        assert soft.slowed_makespan >= soft.makespan
        if soft.avoidable_cva_soft == 0:
            assert soft.slowed_makespan == soft.makespan


@settings(max_examples=100, deadline=None)
@given(instances(), st.booleans())
def test_the_batch_scorer_agrees(instance: tuple[Workflow, Machine, Schedule], strict: bool) -> None:
    workflow, machine, schedule = instance
    machine = soft_cpu(machine)
    exact = evaluate(workflow, machine, schedule, soft_as_hard=strict)
    row = [schedule.starts[t.id] for t in workflow.tasks]
    batch = score_batch(workflow, machine, np.array([row]), soft_as_hard=strict)
    assert bool(batch.safe[0]) == exact.safe
    if not exact.safe:  # the batch's is a safe row's only (see BatchScores)
        assert np.isnan(batch.slowed_makespan[0])
    else:
        assert exact.slowed_makespan is not None
        assert batch.slowed_makespan[0] == pytest.approx(exact.slowed_makespan, rel=1e-9, abs=1e-9)
    assert batch.avoidable_cva_soft[0] == pytest.approx(exact.avoidable_cva_soft, rel=1e-6, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_the_realised_scorer_agrees(data: st.DataObject) -> None:
    workflow = data.draw(workflows(integer=True, piecewise=False))
    machine = soft_cpu(data.draw(machines(integer=True)))
    start = valid_schedule(workflow, data.draw(schedules(workflow, integer=True)))
    row = [start.starts[t.id] for t in workflow.tasks]
    scenarios = draw(workflow, 1, seed=3, noise=Noise(0.0, 0.0))
    scores = RealisedScorer(workflow, machine).score([row], scenarios.lengths, scenarios.scales)
    exact = evaluate(scenarios.workflow(0), machine, start)
    assert bool(scores.safe[0]) == exact.safe
    assert bool(scores.overflow[0]) == (exact.avoidable_cva_hard > 0)
    if exact.safe and exact.slowed_makespan is not None:  # a safe run's is the one used
        assert scores.slowed_makespan[0] == pytest.approx(exact.slowed_makespan, rel=1e-9, abs=1e-9)


def test_a_soft_resource_must_be_a_capacity() -> None:
    with pytest.raises(ValidationError, match="soft resource 'gpu' is not one of the machine's capacities"):
        Machine(name="m", capacity={"cpu": 2}, soft=("gpu",))
    with pytest.raises(ValidationError, match="listed twice"):
        Machine(name="m", capacity={"cpu": 2}, soft=("cpu", "cpu"))


def test_references_do_not_depend_on_soft_but_results_do() -> None:
    hard = Machine(name="m", capacity={"cpu": 2, "memory_mb": 10})
    soft = Machine(name="m", capacity={"cpu": 2, "memory_mb": 10}, soft=("cpu",))
    assert nominal_hash(soft) == nominal_hash(hard) == content_hash(hard)
    assert content_hash(soft) != content_hash(hard)
    assert soft.hard == ("memory_mb",) and soft.as_hard() == hard
