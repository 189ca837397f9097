"""Property tests of the exact evaluator: brute force on a unit grid, the cva floor."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracle_helpers import serial, simulate, valid_schedules
from strategies import machines, schedules, workflows

from peakopt.oracle import TOLERANCE, evaluate


@given(st.data())
def test_every_metric_equals_a_unit_grid_simulation(data: st.DataObject) -> None:
    workflow = data.draw(workflows(max_tasks=6, integer=True))
    machine = data.draw(machines(integer=True))
    schedule = data.draw(
        st.one_of(schedules(workflow, integer=True), valid_schedules(workflow, integer=True))
    )
    score = evaluate(workflow, machine, schedule)
    grid = simulate(workflow, machine, schedule)
    approx = {"rel": 1e-9, "abs": 1e-9}
    assert score.makespan == pytest.approx(float(grid.makespan), **approx)
    assert score.cva == pytest.approx(float(grid.cva), **approx)
    assert score.cva_floor == pytest.approx(float(grid.cva_floor), **approx)
    assert score.avoidable_cva == pytest.approx(max(0.0, float(grid.cva - grid.cva_floor)), **approx)
    assert score.mru == pytest.approx(float(grid.mru), **approx)
    assert score.dependency_violations == grid.dependency_violations
    assert score.valid == (grid.dependency_violations == 0)
    assert score.safe == (score.valid and grid.cva == grid.cva_floor)
    assert score.strict_mru == pytest.approx(float(grid.mru) if grid.cva == 0 else 0.0, **approx)
    assert score.safe_mru == pytest.approx(float(grid.mru) if score.safe else 0.0, **approx)
    for resource, figures in score.resources.items():
        assert figures.peak == pytest.approx(float(grid.peak[resource]), **approx)
        assert figures.peak_ratio == pytest.approx(float(grid.peak[resource]) / figures.capacity, **approx)
        assert figures.violation_area == pytest.approx(float(grid.area[resource]), **approx)


@given(st.data())
def test_serial_execution_attains_the_floor(data: st.DataObject) -> None:
    workflow = data.draw(workflows())
    machine = data.draw(machines())
    score = evaluate(workflow, machine, serial(workflow))
    assert score.valid
    assert score.cva == pytest.approx(score.cva_floor, rel=1e-9, abs=1e-9)
    assert score.safe and score.avoidable_cva <= TOLERANCE * max(1.0, score.makespan)


@given(st.data())
def test_dependency_valid_schedules_never_beat_the_floor(data: st.DataObject) -> None:
    workflow = data.draw(workflows())
    machine = data.draw(machines())
    score = evaluate(workflow, machine, data.draw(valid_schedules(workflow)))
    assert score.valid
    assert score.cva >= score.cva_floor - 1e-9 * max(1.0, score.cva_floor)
