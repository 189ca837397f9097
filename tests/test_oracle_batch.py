"""The vectorised batch path gives the exact path's numbers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracle_helpers import valid_schedules
from strategies import machines, schedules, workflows

from peakopt.instances import load
from peakopt.models import Machine, Schedule, Workflow
from peakopt.oracle import evaluate
from peakopt.oracle.batch import BatchScorer, score_batch

APPROX = {"rel": 1e-9, "abs": 1e-9}


def assert_same(workflow: Workflow, machine: Machine, batch: list[Schedule]) -> None:
    scorer = BatchScorer(workflow, machine)
    scores = scorer.score(scorer.matrix(s.starts for s in batch))
    for row, schedule in enumerate(batch):
        exact = evaluate(workflow, machine, schedule)
        assert bool(scores.valid[row]) == exact.valid
        assert bool(scores.safe[row]) == exact.safe
        assert int(scores.dependency_violations[row]) == exact.dependency_violations
        for name in ("makespan", "cva", "cva_floor", "avoidable_cva", "mru", "strict_mru", "safe_mru"):
            assert getattr(scores, name)[row] == pytest.approx(getattr(exact, name), **APPROX), name
        for column, resource in enumerate(scores.resources):
            figures = exact.resources[resource]
            assert scores.peak[row, column] == pytest.approx(figures.peak, **APPROX)
            assert scores.peak_ratio[row, column] == pytest.approx(figures.peak_ratio, **APPROX)
            assert scores.violation_area[row, column] == pytest.approx(figures.violation_area, **APPROX)


@given(st.data())
def test_batch_equals_exact_on_random_schedules(data: st.DataObject) -> None:
    workflow = data.draw(workflows(piecewise=True))
    machine = data.draw(machines())
    batch = data.draw(
        st.lists(st.one_of(schedules(workflow), valid_schedules(workflow)), min_size=1, max_size=6)
    )
    assert_same(workflow, machine, batch)


@given(st.data())
def test_batch_equals_exact_with_missing_starts(data: st.DataObject) -> None:
    workflow = data.draw(workflows())
    machine = data.draw(machines())
    full = data.draw(schedules(workflow))
    kept = data.draw(st.sets(st.sampled_from(sorted(full.starts))))
    partial = Schedule(workflow=workflow.id, starts={t: s for t, s in full.starts.items() if t in kept})
    assert_same(workflow, machine, [partial, full])


def test_refund_batch_by_hand() -> None:
    suite = load("bundled:refund")
    workflow, machine = suite.workflows[0], suite.machines[0]
    # columns: lookup_order, fraud_score, history_scan, policy_search, decide
    scores = score_batch(workflow, machine, [[0, 0, 0, 0, 4.8], [0, 0, 4.8, 0, 8.0], [0, 0, 4.8, 0, 1.0]])
    assert scores.cva == pytest.approx([0.55, 0.0, 0.0])
    assert scores.makespan == pytest.approx([5.4, 8.6, 8.0])
    assert scores.safe.tolist() == [False, True, False]
    assert scores.valid.tolist() == [True, True, False]
    assert scores.dependency_violations.tolist() == [0, 0, 3]  # fraud, history, policy end after 1.0
    assert scores.peak_ratio[0, scores.resources.index("memory_mb")] == pytest.approx(10240 / 8192)


def test_batch_rejects_a_wrong_shape_and_handles_no_rows() -> None:
    suite = load("bundled:refund")
    workflow, machine = suite.workflows[0], suite.machines[0]
    with pytest.raises(ValueError, match="shape"):
        score_batch(workflow, machine, np.zeros((2, 4)))
    assert score_batch(workflow, machine, np.zeros((0, 5))).cva.shape == (0,)


def test_batch_spans_several_chunks() -> None:
    suite = load("bundled:refund")
    workflow, machine = suite.workflows[0], suite.machines[0]
    rng = np.random.default_rng(7)
    starts = rng.uniform(0, 10, size=(9000, 5))
    scores = score_batch(workflow, machine, starts)
    for row in (0, 4096, 8999):
        exact = evaluate(
            workflow,
            machine,
            Schedule(workflow="refund", starts=dict(zip(workflow.index, starts[row], strict=True))),
        )
        assert scores.cva[row] == pytest.approx(exact.cva, **APPROX)
        assert scores.mru[row] == pytest.approx(exact.mru, **APPROX)
