"""Property tests of the exact evaluator: brute force on a unit grid, exact rationals at every
magnitude, float noise in the starts, a change of unit, the cva floor."""

from __future__ import annotations

from fractions import Fraction
from functools import partial

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from oracle_helpers import (
    Exact,
    decimal,
    exact_metrics,
    scaled,
    serial,
    shifted,
    simulate,
    topological,
    valid_schedules,
)
from strategies import machines, schedules, workflows

from peakopt.models import Machine, Schedule
from peakopt.oracle import Score, evaluate


@pytest.mark.slow
@given(st.data())
def test_every_metric_equals_a_unit_grid_simulation(data: st.DataObject) -> None:
    workflow = data.draw(workflows(max_tasks=6, integer=True))
    machine = data.draw(machines(integer=True))
    schedule = data.draw(
        st.one_of(schedules(workflow, integer=True), valid_schedules(workflow, integer=True))
    )
    score = evaluate(workflow, machine, schedule)
    grid = simulate(workflow, machine, schedule)
    approx = partial(pytest.approx, rel=1e-9, abs=1e-9)
    assert score.makespan == approx(float(grid.makespan))
    assert score.cva == approx(float(grid.cva))
    assert score.cva_floor == approx(float(grid.cva_floor))
    assert score.avoidable_cva == approx(max(0.0, float(grid.cva - grid.cva_floor)))
    if grid.mru is None:
        assert score.mru is None and score.strict_mru is None
    else:
        assert score.mru == approx(float(grid.mru))
        assert score.strict_mru == approx(float(grid.mru) if grid.cva == 0 else 0.0)
        assert score.safe_mru == approx(float(grid.mru) if score.safe else 0.0)
    assert score.dependency_violations == grid.dependency_violations
    assert score.valid == (grid.dependency_violations == 0)
    assert score.safe == (score.valid and grid.cva == grid.cva_floor)
    for resource, figures in score.resources.items():
        assert figures.peak == approx(float(grid.peak[resource]))
        assert figures.peak_ratio == approx(float(grid.peak[resource]) / figures.capacity)
        assert figures.violation_area == approx(float(grid.area[resource]))


@pytest.mark.slow
@given(st.data())
def test_serial_execution_attains_the_floor(data: st.DataObject) -> None:
    workflow = data.draw(workflows())
    machine = data.draw(machines())
    score = evaluate(workflow, machine, serial(workflow))
    assert score.valid
    assert score.cva == score.cva_floor  # exactly: both are the same rational, rounded once
    assert score.safe and score.avoidable_cva == 0


@pytest.mark.slow
@given(st.data())
def test_dependency_valid_schedules_never_beat_the_floor(data: st.DataObject) -> None:
    workflow = data.draw(workflows())
    machine = data.draw(machines())
    score = evaluate(workflow, machine, data.draw(valid_schedules(workflow)))
    assert score.valid
    assert score.cva >= score.cva_floor - 1e-9 * max(1.0, score.cva_floor)


MAGNITUDES = st.tuples(st.integers(1, 999), st.integers(-6, 7))


def _assert_exact(score: Score, exact: Exact, machine: Machine) -> None:
    assert score.valid == exact.valid
    assert score.dependency_violations == exact.dependency_violations
    assert score.makespan == float(exact.makespan)
    assert score.cva == float(exact.cva) and score.cva_floor == float(exact.cva_floor)
    assert score.avoidable_cva == float(exact.cva - exact.cva_floor)
    assert score.safe == (exact.valid and exact.cva == exact.cva_floor)
    assert score.mru == (None if exact.mru is None else float(exact.mru))
    assert score.strict_mru == (None if exact.mru is None else float(exact.mru) if exact.cva == 0 else 0.0)
    for resource, figures in score.resources.items():
        assert figures.peak == float(exact.peak[resource])
        assert figures.peak_ratio == float(exact.peak[resource] / decimal(machine.capacity[resource]))
        assert figures.violation_area == float(exact.area[resource])


@pytest.mark.slow
@given(st.data(), MAGNITUDES, st.integers(-6, 6))
def test_decimal_data_at_every_magnitude_score_as_exact_rationals(
    data: st.DataObject, time: tuple[int, int], demand: int
) -> None:
    # from 1e-6 s to 1e10 s, demands from 1e-6 to 1e7: each figure is the exact one, rounded once
    base = data.draw(workflows(max_tasks=6, integer=True))
    workflow, machine = scaled(base, data.draw(machines(integer=True)), time, demand)
    starts = data.draw(st.one_of(schedules(base, integer=True), valid_schedules(base, integer=True)))
    schedule = Schedule(
        workflow="w", starts={t: shifted(s * time[0], time[1]) for t, s in starts.starts.items()}
    )
    _assert_exact(evaluate(workflow, machine, schedule), exact_metrics(workflow, machine, schedule), machine)


@pytest.mark.slow
@given(st.data(), MAGNITUDES)
def test_starts_summed_in_floats_get_the_verdicts_of_the_exact_sums(
    data: st.DataObject, time: tuple[int, int]
) -> None:
    # a program adds durations in floats (0.1 + 0.2 = 0.30000000000000004): no verdict changes
    workflow, machine = scaled(
        data.draw(workflows(max_tasks=6, integer=True)), data.draw(machines(integer=True)), time, 0
    )
    slack = {t.id: shifted(data.draw(st.integers(0, 4)) * time[0], time[1]) for t in workflow.tasks}
    summed: dict[str, float] = {}
    exact: dict[str, Fraction] = {}
    for task_id in topological(workflow):
        task = workflow.task(task_id)
        summed[task_id] = max((summed[p] + workflow.task(p).length for p in task.depends_on), default=0.0)
        summed[task_id] += slack[task_id]
        ready = (
            exact[p] + sum(decimal(s.duration) for s in workflow.task(p).segments) for p in task.depends_on
        )
        exact[task_id] = max(ready, default=Fraction(0)) + decimal(slack[task_id])
    score = evaluate(workflow, machine, Schedule(workflow="w", starts=summed))
    truth = exact_metrics(
        workflow, machine, Schedule(workflow="w", starts={t: float(x) for t, x in exact.items()})
    )
    assert score.valid and truth.valid
    assert score.safe == (truth.cva == truth.cva_floor)
    assert (score.cva == 0) == (truth.cva == 0)
    assert (score.avoidable_cva == 0) == (truth.cva == truth.cva_floor)
    assert score.cva == pytest.approx(float(truth.cva), rel=1e-12)
    for resource, figures in score.resources.items():
        assert figures.peak == float(truth.peak[resource])


@pytest.mark.slow
@given(st.data(), st.sampled_from([6, -6, 3]), st.sampled_from([0, 3, -3]))
def test_a_change_of_unit_changes_no_verdict(data: st.DataObject, time: int, demand: int) -> None:
    # seconds -> microseconds (or ms, ks), MB -> GB...: the same verdicts, and the ratios unchanged
    workflow, machine = data.draw(workflows()), data.draw(machines())
    schedule = data.draw(st.one_of(schedules(workflow), valid_schedules(workflow)))
    numbers = [x for t in workflow.tasks for s in t.segments for x in (s.duration, *s.demand.values())]
    assume(all(x == 0 or x > 1e-290 for x in [*numbers, *schedule.starts.values()]))  # a unit floats carry
    other, bigger = scaled(workflow, machine, (1, time), demand)
    moved = Schedule(workflow="w", starts={t: shifted(s, time) for t, s in schedule.starts.items()})
    before, after = evaluate(workflow, machine, schedule), evaluate(other, bigger, moved)
    assert (after.valid, after.safe, after.dependency_violations) == (
        before.valid,
        before.safe,
        before.dependency_violations,
    )
    assert [(v.kind, v.avoidable) for v in after.violations] == [
        (v.kind, v.avoidable) for v in before.violations
    ]
    # (a 17-digit float may not shift exactly: its neighbour's shortest decimal is one digit shorter)
    for name in ("mru", "strict_mru", "safe_mru"):
        value = getattr(before, name)
        assert getattr(after, name) == (None if value is None else pytest.approx(value, rel=1e-15)), name
    assert after.cva == pytest.approx(shifted(before.cva, time), rel=1e-12)
    assert after.makespan == pytest.approx(shifted(before.makespan, time), rel=1e-15)
    for resource, figures in after.resources.items():
        assert figures.peak_ratio == pytest.approx(before.resources[resource].peak_ratio, rel=1e-15)
