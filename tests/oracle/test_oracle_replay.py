"""Replay modes, delay origins, filling missing steps; gaps against a reference."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracle_helpers import CHAIN
from strategies import schedules, workflows

from peakopt.instances import load
from peakopt.models import Machine, Schedule, SolveResult
from peakopt.oracle import evaluate
from peakopt.oracle.answers.parse import Parsed
from peakopt.oracle.answers.replay import replay
from peakopt.oracle.judge.evaluate import with_reference
from peakopt.oracle.judge.metrics import gaps
from peakopt.oracle.tables.score_rows import ReplayOptions, index_references, score_record

SUITE = load("bundled:refund")
REFUND, WORKER = SUITE.workflows[0], SUITE.machines[0]
ZERO = dict.fromkeys(("lookup_order", "fraud_score", "history_scan", "policy_search", "decide"), 0.0)


def test_delays_from_ready_follow_the_predecessors() -> None:
    done = replay(REFUND, Parsed(ZERO | {"history_scan": 4.8}, "delay"), delay_from="ready")
    assert done.starts == pytest.approx(ZERO | {"history_scan": 4.8, "decide": 8.0})
    assert done.pushed == 0 and not done.problems


def test_delays_from_zero_are_starts() -> None:
    done = replay(REFUND, Parsed(ZERO | {"history_scan": 4.8}, "delay"), delay_from="zero")
    assert done.starts == pytest.approx(ZERO | {"history_scan": 4.8})
    runtime = replay(REFUND, Parsed(ZERO | {"history_scan": 4.8}, "delay"), "runtime", delay_from="zero")
    assert runtime.starts["decide"] == pytest.approx(8.0)
    assert runtime.pushed == 1 and runtime.pushed_seconds == pytest.approx(8.0)


def test_runtime_pushes_down_a_chain() -> None:
    done = replay(CHAIN, Parsed({"a": 0, "b": 0, "c": 3}, "start"), "runtime")
    assert done.starts == {"a": 0, "b": 2, "c": 5}
    assert done.pushed == 2 and done.pushed_seconds == pytest.approx(4.0)
    literal = replay(CHAIN, Parsed({"a": 0, "b": 0, "c": 3}, "start"), "literal")
    assert literal.starts == {"a": 0, "b": 0, "c": 3} and literal.pushed == 0


def test_missing_steps_filled_asap() -> None:
    parsed = Parsed({"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8}, "start")
    done = replay(REFUND, parsed, missing="asap")
    assert done.filled == 2
    assert done.starts["policy_search"] == 0 and done.starts["decide"] == pytest.approx(8.0)
    left = replay(REFUND, parsed, missing="invalid")
    assert left.filled == 0 and "decide" not in left.starts


def test_negative_delay_is_a_problem() -> None:
    done = replay(REFUND, Parsed(ZERO | {"decide": -1.0}, "delay"))
    assert [p.message for p in done.problems] == ["step 'decide': requested delay -1 is negative"]


def test_unknown_steps_are_kept_for_the_oracle() -> None:
    done = replay(CHAIN, Parsed({"a": 0, "b": 2, "c": 5, "zz": 1}, "start"), "runtime")
    assert done.starts["zz"] == 1


@given(st.data())
def test_runtime_replay_always_respects_dependencies(data: st.DataObject) -> None:
    workflow = data.draw(workflows())
    requested = data.draw(schedules(workflow))
    done = replay(workflow, Parsed(dict(requested.starts), "start"), "runtime")
    score = evaluate(
        workflow, Machine(name="m", capacity={"cpu": 1}), Schedule(workflow="w", starts=done.starts)
    )
    assert score.dependency_violations == 0 and score.valid
    assert all(done.starts[t] >= requested.starts[t] for t in requested.starts)


def test_score_record_runtime_counts_pushes() -> None:
    row = score_record({"workflow": "refund", "starts": ZERO}, SUITE, options=ReplayOptions(mode="runtime"))
    assert row.valid and row.pushed == 1 and row.pushed_seconds == pytest.approx(4.8)
    assert row.cva == pytest.approx(0.55) and not row.safe  # the executor is ASAP: memory overflows


def reference(
    status: str = "optimal", makespan: float | None = 8.6, lower: float | None = 8.6
) -> SolveResult:
    return SolveResult(
        workflow="refund", machine="worker", status=status, makespan=makespan, lower_bound=lower
    )


def test_gaps_by_definition() -> None:
    assert gaps(9.46, reference()) == pytest.approx((0.1, 0.1, 0.1))
    gap, vs_lb, vs_ub = gaps(9.0, reference("feasible", 10.0, 8.0))
    assert gap is None and vs_lb == pytest.approx(0.125) and vs_ub == pytest.approx(-0.1)
    assert gaps(1.0, reference("unknown", None, None)) == (None, None, None)
    assert gaps(1.0, reference("feasible", 0.0, 0.0)) == (None, None, None)  # zero bounds: undefined
    inexact = reference().model_copy(update={"exact": False})
    assert gaps(9.46, inexact)[0] is None  # the optimum of rounded data is not the true optimum


def test_with_reference_fills_the_score() -> None:
    staggered = ZERO | {"history_scan": 4.8, "decide": 8.0}
    score = evaluate(REFUND, WORKER, Schedule(workflow="refund", machine="worker", starts=staggered))
    assert with_reference(score, reference()).gap == pytest.approx(0.0)
    invalid = evaluate(REFUND, WORKER, Schedule(workflow="refund", machine="worker", starts=ZERO))
    assert with_reference(invalid, reference()).gap is None  # decide before its predecessors end
    with pytest.raises(ValueError, match="reference is for"):
        with_reference(score, reference().model_copy(update={"workflow": "other"}))


def test_score_record_reports_gaps_for_valid_records_only() -> None:
    refs = index_references([reference()])
    safe = score_record(
        {"workflow": "refund", "starts": ZERO | {"history_scan": 4.8, "decide": 8.0}}, SUITE, refs
    )
    assert safe.gap == pytest.approx(0.0) and safe.reference_status == "optimal"
    broken = score_record({"workflow": "refund", "starts": ZERO | {"decide": "x"}}, SUITE, refs)
    assert not broken.valid and broken.gap is None
