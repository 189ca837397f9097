"""Realistic LLM answers: what the oracle reads from each, or why it is invalid."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from peakopt.instances import load
from peakopt.oracle.extract import find_json
from peakopt.oracle.parse import number, parse_response, parse_starts
from peakopt.oracle.score import Violation
from peakopt.oracle.scoring import score_prediction, score_record

SUITE = load("bundled:refund")
STEPS = ("lookup_order", "fraud_score", "history_scan", "policy_search", "decide")
SAFE = {"lookup_order": 0.0, "fraud_score": 0.0, "history_scan": 4.8, "policy_search": 0.0, "decide": 8.0}
DELAYS = dict.fromkeys(STEPS, 0.0) | {"history_scan": 4.8}


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    values: dict[str, float] | None = None  # what is read (starts, or delays when kind is delay)
    reason: str | None = None  # a substring of one reason when the record is invalid
    kind: str = "start"


CASES = [
    Case(
        "fenced json",
        'Here is the schedule:\n```json\n{"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8,'
        ' "policy_search": 0, "decide": 8.0}\n```\nThis keeps memory under 8 GiB.',
        SAFE,
    ),
    Case(
        "fence without a language",
        '```\n{"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8, "policy_search": 0,'
        ' "decide": 8}\n```',
        SAFE,
    ),
    Case(
        "json inside prose",
        'Sure! I would run {"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8, "policy_search": 0,'
        ' "decide": 8.0} so that the scan waits for the fraud model. Let me know if you need more.',
        SAFE,
    ),
    Case(
        "trailing commas",
        '{"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8, "policy_search": 0, "decide": 8.0,}',
        SAFE,
    ),
    Case(
        "single quotes",
        "{'lookup_order': 0, 'fraud_score': 0, 'history_scan': 4.8, 'policy_search': 0, 'decide': 8.0}",
        SAFE,
    ),
    Case(
        "comments",
        '{\n  "lookup_order": 0, // cheap\n  "fraud_score": 0, /* big model */\n  "history_scan": 4.8,'
        ' # after the fraud model\n  "policy_search": 0,\n  "decide": 8.0\n}',
        SAFE,
    ),
    Case(
        "numbers as strings, with units",
        '{"lookup_order": "0", "fraud_score": "0.0", "history_scan": "4.8s", "policy_search": "0",'
        ' "decide": "8.0 seconds"}',
        SAFE,
    ),
    Case(
        "unquoted keys",
        "{lookup_order: 0, fraud_score: 0, history_scan: 4.8, policy_search: 0, decide: 8.0}",
        SAFE,
    ),
    Case(
        "list of id/start",
        '[{"id": "lookup_order", "start": 0}, {"id": "fraud_score", "start": 0},'
        ' {"id": "history_scan", "start": 4.8}, {"id": "policy_search", "start": 0},'
        ' {"id": "decide", "start": 8.0}]',
        SAFE,
    ),
    Case(
        "list of step/start_time with extra fields",
        '[{"step": "lookup_order", "start_time": 0, "end_time": 0.3},'
        ' {"step": "fraud_score", "start_time": 0},'
        ' {"step": "history_scan", "start_time": 4.8, "why": "after fraud"},'
        ' {"step": "policy_search", "start_time": 0}, {"step": "decide", "start_time": 8}]',
        SAFE,
    ),
    Case(
        "wrapped with a makespan",
        '{"schedule": {"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8, "policy_search": 0,'
        ' "decide": 8.0}, "makespan": 8.6}',
        SAFE,
    ),
    Case(
        "reasoning beside the schedule",
        '{"reasoning": "fraud and history together need 9 GiB",'
        ' "plan": [{"step": "lookup_order", "start": 0},'
        ' {"step": "fraud_score", "start": 0}, {"step": "history_scan", "start": 4.8},'
        ' {"step": "policy_search", "start": 0}, {"step": "decide", "start": 8.0}]}',
        SAFE,
    ),
    Case(
        "step -> object with start",
        '{"lookup_order": {"start": 0}, "fraud_score": {"start": 0}, "history_scan": {"start": 4.8},'
        ' "policy_search": {"start": 0}, "decide": {"start": 8.0}}',
        SAFE,
    ),
    Case(
        "[step, start] pairs",
        '[["lookup_order", 0], ["fraud_score", 0], ["history_scan", 4.8], ["policy_search", 0],'
        ' ["decide", 8]]',
        SAFE,
    ),
    Case(
        "peakbench requested_delay list",
        '```json\n[{"step_id": "lookup_order", "requested_delay": 0}, {"step_id": "fraud_score",'
        ' "requested_delay": 0}, {"step_id": "history_scan", "requested_delay": 4.8},'
        ' {"step_id": "policy_search", "requested_delay": 0},'
        ' {"step_id": "decide", "requested_delay": 0}]\n```',
        DELAYS,
        kind="delay",
    ),
    Case(
        "requested_delays map",
        '{"requested_delays": {"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8,'
        ' "policy_search": 0, "decide": 0}}',
        DELAYS,
        kind="delay",
    ),
    Case(
        "draft then final answer",
        'First try:\n```json\n{"lookup_order": 0, "fraud_score": 0, "history_scan": 0, "policy_search": 0,'
        ' "decide": 4.8}\n```\nThat overflows memory. Final:\n```json\n{"lookup_order": 0, "fraud_score": 0,'
        ' "history_scan": 4.8, "policy_search": 0, "decide": 8.0}\n```',
        SAFE,
    ),
    Case(
        "brackets in the prose before the answer",
        'Steps [lookup_order] and [policy_search] are cheap (see [1]). Schedule: {"lookup_order": 0,'
        ' "fraud_score": 0, "history_scan": 4.8, "policy_search": 0, "decide": 8.0}',
        SAFE,
    ),
    Case(
        "truncated answer",
        '```json\n{"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8, "policy_search": 0,'
        ' "decide": 8.0',
        SAFE,
    ),
    Case(
        "missing steps",
        '{"lookup_order": 0, "fraud_score": 0, "decide": 8.0}',
        {"lookup_order": 0.0, "fraud_score": 0.0, "decide": 8.0},
        reason="task 'history_scan' has no start",
    ),
    Case(
        "extra (hallucinated) step",
        '{"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8, "policy_search": 0, "decide": 8.0,'
        ' "notify_customer": 8.6}',
        SAFE | {"notify_customer": 8.6},
        reason="unknown task 'notify_customer'",
    ),
    Case(
        "duplicate step in a list",
        '[{"id": "lookup_order", "start": 0}, {"id": "fraud_score", "start": 0}, {"id": "history_scan",'
        ' "start": 4.8}, {"id": "policy_search", "start": 0}, {"id": "decide", "start": 8.0},'
        ' {"id": "fraud_score", "start": 1}]',
        reason="step 'fraud_score' is given twice",
    ),
    Case(
        "duplicate key in an object",
        '{"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8, "policy_search": 0, "decide": 8.0,'
        ' "history_scan": 0}',
        reason="step 'history_scan' is given twice",
    ),
    Case(
        "duplicate key in broken json",
        "{'lookup_order': 0, 'fraud_score': 0, 'history_scan': 4.8, 'policy_search': 0, 'decide': 8.0,"
        " 'decide': 9,}",
        reason="step 'decide' is given twice",
    ),
    Case(
        "negative start",
        '{"lookup_order": -1, "fraud_score": 0, "history_scan": 4.8, "policy_search": 0, "decide": 8.0}',
        SAFE | {"lookup_order": -1.0},
        reason="step 'lookup_order': start -1 is negative",
    ),
    Case(
        "non-numeric start",
        '{"lookup_order": 0, "fraud_score": 0, "history_scan": "after fraud_score", "policy_search": 0,'
        ' "decide": 8.0}',
        reason="step 'history_scan': start 'after fraud_score' is not a finite number",
    ),
    Case(
        "NaN start",
        '{"lookup_order": 0, "fraud_score": 0, "history_scan": NaN, "policy_search": 0, "decide": 8.0}',
        reason="is not a finite number",
    ),
    Case(
        "boolean start",
        '{"lookup_order": 0, "fraud_score": 0, "history_scan": true, "policy_search": 0, "decide": 8.0}',
        reason="step 'history_scan': start True is not a finite number",
    ),
    Case(
        "dependency broken",
        '{"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8, "policy_search": 0, "decide": 1.0}',
        SAFE | {"decide": 1.0},
        reason="fraud_score -> decide: decide starts at 1.0 before fraud_score ends at 4.8",
    ),
    Case(
        "mixed starts and delays",
        '[{"id": "lookup_order", "start": 0}, {"id": "fraud_score", "requested_delay": 0},'
        ' {"id": "history_scan", "start": 4.8}, {"id": "policy_search", "start": 0},'
        ' {"id": "decide", "start": 8}]',
        reason="mixes start times and requested delays",
    ),
    Case("empty text", "", reason="empty response"),
    Case("whitespace only", "  \n\t ", reason="empty response"),
    Case(
        "plain refusal",
        "I'm sorry, but I can't help with scheduling these tool calls.",
        reason="no JSON in the response: \"I'm sorry, but I can't help with scheduling these tool ca...\"",
    ),
    Case(
        "markdown table instead of json",
        "| step | start |\n|---|---|\n| lookup_order | 0 |\n| decide | 8 |",
        reason="no JSON in the response",
    ),
    Case(
        "json without a schedule",
        '{"answer": "run everything in parallel", "confidence": "high"}',
        reason="the response's JSON holds no schedule",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_llm_response(case: Case) -> None:
    row = score_record({"workflow": "refund", "source": "llm", "response": case.text}, SUITE)
    if case.values is not None:
        assert row.requested == pytest.approx(case.values)
        assert row.requested_kind == case.kind
    if case.reason is None:
        assert row.valid, row.reasons
        assert not row.reasons
    else:
        assert not row.valid
        assert any(case.reason in reason for reason in row.reasons), row.reasons


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 25


def test_safe_answers_score_as_the_safe_schedule() -> None:
    row = score_record({"workflow": "refund", "response": CASES[0].text}, SUITE)
    assert row.safe and row.makespan == pytest.approx(8.6) and row.cva == 0


def test_a_repeated_reason_is_stated_once() -> None:
    text = (
        '{"lookup_order": "soon", "fraud_score": 0, "history_scan": 4.8, "policy_search": 0, "decide": 8.0}'
    )
    row = score_record({"workflow": "refund", "response": text}, SUITE)
    assert row.reasons == ["step 'lookup_order': start 'soon' is not a finite number"]
    assert row.reason_kinds == ["non_numeric"]


def test_parse_starts_of_a_record() -> None:
    parsed = parse_starts({"a": 1, "b": "2.5"}, ("a", "b"))
    assert parsed is not None and parsed.values == {"a": 1.0, "b": 2.5} and parsed.kind == "start"
    assert parse_starts({}, ("a",)) is None
    assert parse_starts({"note": "text only"}, ("a",)) is None


def test_parse_response_reports_repair() -> None:
    repaired = parse_response("{'a': 1,}", ("a",))
    clean = parse_response('{"a": 1}', ("a",))
    assert not isinstance(repaired, Violation) and repaired.repaired
    assert not isinstance(clean, Violation) and not clean.repaired


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(3, 3.0), ("4.5", 4.5), ("4.5s", 4.5), (" 2 sec ", 2.0), ("1e1", 10.0), ("soon", None), (True, None)],
)
def test_number(raw: object, expected: float | None) -> None:
    assert number(raw) == expected


def test_find_json_prefers_fenced_then_last() -> None:
    text = 'draft {"a": 1}\n```json\n{"a": 2}\n```\nafter {"a": 3}'
    assert [d.value for d in find_json(text)] == [{"a": 2}, {"a": 3}, {"a": 1}]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | st.sampled_from(STEPS),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.sampled_from((*STEPS, "start", "id", "x")), inner, max_size=5)
    ),
    max_leaves=20,
)


@given(st.text(max_size=300) | JSON.map(json.dumps))
def test_any_response_is_scored_without_raising(text: str) -> None:
    row = score_record({"workflow": "refund", "source": "fuzz", "response": text}, SUITE)
    assert row.valid == (not row.reasons)
    plan = score_prediction({"workflow": "refund", "response": text}, SUITE)
    assert plan.valid == (not plan.reasons)


@given(JSON, JSON)
def test_any_record_fields_are_scored_without_raising(starts: object, workflow: object) -> None:
    assert score_record({"workflow": "refund", "starts": starts}, SUITE).source is None
    score_record({"workflow": workflow, "machine": starts, "response": starts}, SUITE)
    score_prediction({"workflow": "refund", "edges": starts, "dependencies": workflow}, SUITE)


@pytest.mark.parametrize("text", ["{" * 5000, "[" * 3000 + "]" * 3000, '{"a": [' * 2000])
def test_pathologically_nested_text_is_no_json(text: str) -> None:
    found = parse_response(text, ("a",))
    assert isinstance(found, Violation) and found.kind == "parse"
