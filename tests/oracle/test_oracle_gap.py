"""Gaps: defined for safe schedules only, so an unsafe one never shows a negative gap."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import machines, schedules, workflows

from peakopt.instances import load
from peakopt.models import Machine, Schedule, SolveResult, Workflow
from peakopt.oracle import evaluate, score_record, with_reference
from peakopt.oracle.tables.aggregate import aggregate

SUITE = load("bundled:refund")
REFUND, WORKER = SUITE.workflows[0], SUITE.machine("worker")
ASAP = dict.fromkeys(REFUND.index, 0.0) | {"decide": 4.8}  # 5.4 s, overflows memory
OPTIMUM = SolveResult(workflow="refund", machine="worker", status="optimal", makespan=8.6, lower_bound=8.6)


def test_an_unsafe_schedule_gets_no_gap() -> None:
    score = evaluate(REFUND, WORKER, Schedule(workflow="refund", machine="worker", starts=ASAP))
    assert score.valid and not score.safe and score.makespan < 8.6  # faster, by overflowing
    judged = with_reference(score, OPTIMUM)
    assert (judged.gap, judged.gap_vs_lb, judged.gap_vs_ub) == (None, None, None)


def test_unsafe_rows_show_no_gap_in_rows_or_aggregates() -> None:
    refs: dict[tuple[str, str | None], SolveResult] = {("refund", "worker"): OPTIMUM}
    row = score_record({"workflow": "refund", "source": "asap", "starts": ASAP}, SUITE, refs)
    assert row.valid and not row.safe and row.gap is None and row.gap_vs_ub is None
    assert row.reference_status == "optimal"
    (summary,) = aggregate([row])
    assert summary.gap is None and summary.gap_vs_ub is None


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_a_gap_is_only_ever_given_to_a_safe_schedule(data: st.DataObject) -> None:
    workflow: Workflow = data.draw(workflows(max_tasks=6))
    machine: Machine = data.draw(machines())
    schedule = data.draw(schedules(workflow))
    reference = SolveResult(workflow="w", machine="m", status="optimal", makespan=1.0, lower_bound=1.0)
    judged = with_reference(evaluate(workflow, machine, schedule), reference)
    figures = (judged.gap, judged.gap_vs_lb, judged.gap_vs_ub)
    assert judged.safe or figures == (None, None, None)
