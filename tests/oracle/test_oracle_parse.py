"""Realistic LLM answers: what the oracle reads from each, or why it is invalid."""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from paths import J30

from peakopt.instances import load
from peakopt.models import Machine, Workflow
from peakopt.oracle.answers.extract import find_json
from peakopt.oracle.answers.numbers import read_number
from peakopt.oracle.answers.parse import Parsed, parse_response, parse_starts
from peakopt.oracle.judge.verdict import Violation
from peakopt.oracle.tables.score_rows import score_prediction, score_record
from peakopt.solver import solve

SUITE = load("bundled:refund")
STEPS = ("lookup_order", "fraud_score", "history_scan", "policy_search", "decide")
SAFE = {"lookup_order": 0.0, "fraud_score": 0.0, "history_scan": 4.8, "policy_search": 0.0, "decide": 8.0}
DELAYS = dict.fromkeys(STEPS, 0.0) | {"history_scan": 4.8}
ASAP = dict.fromkeys(STEPS, 0.0) | {"decide": 4.8}
SAFE_JSON, ASAP_JSON = json.dumps(SAFE), json.dumps(ASAP)


def solve_reference(workflow: Workflow, machine: Machine) -> dict[str, float]:
    result = solve(workflow, machine, time_limit=10, workers=1)
    assert result.starts is not None
    return dict(result.starts)


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
        reason="cut off inside its JSON (truncated output)",
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
        SAFE,  # a timing for no step of the workflow is named, not read
        reason="unknown step ids: 'notify_customer'",
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
        reason="step 'history_scan': start true is not a number",
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
    # --- reasoning models (item 15): a schedule inside the reasoning is not the answer ---
    Case("think block holding a draft", f"<think>First {ASAP_JSON}? No: memory.</think>\n{SAFE_JSON}", SAFE),
    Case("reasoning tag", f"<reasoning>{ASAP_JSON}</reasoning>Answer: {SAFE_JSON}", SAFE),
    Case("thinking tag in capitals", f"<THINKING>{ASAP_JSON}</Thinking>\n```json\n{SAFE_JSON}\n```", SAFE),
    Case("closing tag without its opening", f"I try {ASAP_JSON}, it overflows.</think>{SAFE_JSON}", SAFE),
    Case(
        "unclosed think after the answer",
        f"{SAFE_JSON}\n<think>or maybe {ASAP_JSON} would be faster... let me check the memory of",
        SAFE,
    ),
    Case("schedule only in the reasoning", f"<think>So: {SAFE_JSON}</think>That is my schedule.", SAFE),
    Case("truncated reasoning holding the only schedule", f"<think>Plan {SAFE_JSON} then ", SAFE),
    # --- several schedules (item 16): the one marked final, else ambiguous ---
    Case(
        "final answer label after a draft",
        f"Draft: {ASAP_JSON}\nIt overflows.\nFinal answer: {SAFE_JSON}",
        SAFE,
    ),
    Case(
        "counter-example quoted after the final schedule",
        f"Final schedule:\n```json\n{SAFE_JSON}\n```\nStarting everything at once, {ASAP_JSON}, overflows.",
        SAFE,
    ),
    Case(
        "markdown heading",
        f"{ASAP_JSON} is too greedy.\n\n## Final schedule\n\n```json\n{SAFE_JSON}\n```",
        SAFE,
    ),
    Case(
        "bold final line",
        f"Try {ASAP_JSON}.\n**Final answer**\n{SAFE_JSON}\nor {ASAP_JSON} if memory allows",
        SAFE,
    ),
    Case("answer element", f"Candidates: {ASAP_JSON} and <answer>{SAFE_JSON}</answer> and {ASAP_JSON}", SAFE),
    Case("final_schedule key", f'{{"draft": {ASAP_JSON}, "final_schedule": {SAFE_JSON}}}', SAFE),
    Case("identical repeats are one schedule", f"{SAFE_JSON}\nTo repeat: {SAFE_JSON}", SAFE),
    Case("a part quoted again", f'{SAFE_JSON}\nNote that decide waits: {{"decide": 8.0}}.', SAFE),
    Case(
        "two different schedules, none marked",
        f"Option A: {ASAP_JSON}\nOption B: {SAFE_JSON}",
        reason="gives 2 different schedules and marks none as final",
    ),
    Case(
        "two different schedules, both marked",
        f"Final answer: {ASAP_JSON}\nFinal answer (revised): {SAFE_JSON}",
        reason="gives 2 different schedules and marks 2 as final",
    ),
    Case(
        "a draft after the answer, none marked",
        f"{SAFE_JSON}\nbut {ASAP_JSON} is faster",
        reason="gives 2 different schedules",
    ),
    Case(
        "schedule beside its dependencies, end times and resource use",
        f'{{"dependencies": [["lookup_order", "decide"], ["fraud_score", "decide"]], "schedule": {SAFE_JSON},'
        ' "end_times": {"lookup_order": 0.3, "decide": 8.6}, "finishTimes": {"decide": 8.6},'
        ' "resources": {"cpu": 4, "memory_mb": 8192}, "notes": {"decide": "after the scan"}}',
        SAFE,
    ),
    # --- extraction uncapped by position (item 17) ---
    Case("after 100 citations", " ".join(f"[{i}]" for i in range(1, 101)) + f" So: {SAFE_JSON}", SAFE),
    Case(
        "after links and bracketed prose",
        "See [the docs](https://example.com/a[1]) and [this (long) note] {and a stray brace\n" * 50
        + SAFE_JSON,
        SAFE,
    ),
    Case("after an apostrophe in brackets", f"[the model's note] and [it's fine]\n{SAFE_JSON}", SAFE),
    Case("after an unclosed bracket of prose", f"Consider [the steps: lookup and\n\n{SAFE_JSON}", SAFE),
    # --- numbers and truncation (item 18) ---
    Case(
        "explicit units",
        '{"lookup_order": "0 s", "fraud_score": "0ms", "history_scan": "4800ms", "policy_search": "0 min",'
        ' "decide": "0.00222222222222 h"}',
        SAFE | {"decide": float(Decimal("0.00222222222222") * 3600)},
    ),
    Case(
        "an ambiguous unit is refused",
        '{"lookup_order": 0, "fraud_score": 0, "history_scan": "4.8m", "policy_search": 0, "decide": 8}',
        reason="start '4.8m': the unit 'm' is ambiguous (minutes or milliseconds?)",
    ),
    Case(
        "truncated mid-number",
        '{"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8, "policy_search": 0, "decide": 1',
        reason="cut off inside its JSON",
    ),
    Case(
        "truncated mid-list",
        '```json\n[{"id": "lookup_order", "start": 0}, {"id": "fraud_score", "start": 0},'
        ' {"id": "history_scan", "start": 4.8}, {"id": "decide", "sta',
        reason="cut off inside its JSON",
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
    [
        (3, 3.0),
        ("4.5", 4.5),
        ("4.5s", 4.5),
        (" 2 sec ", 2.0),
        ("1e1", 10.0),
        ("soon", None),
        (True, None),
        ("4800ms", 4.8),
        ("9 ms", 0.009),  # exactly the float 0.009, not 9 * 0.001 = 0.009000000000000001
        ("2.2 h", 7920.0),  # not 2.2 * 3600 = 7920.000000000001
        ("4800 milliseconds", 4.8),
        ("2 min", 120.0),
        ("1.5 s", 1.5),
        ("1 h", 3600.0),
        ("0.1 hours", 360.0),
        ("250 us", 0.00025),
        ("250µs", 0.00025),
        ("4.8m", None),  # minutes or milli: refused
        ("5 GB", None),
        ("1e400", None),
        (10**400, None),
        ("-1 s", -1.0),  # read; replay reports it as a negative start
    ],
)
def test_number(raw: object, expected: float | None) -> None:
    assert read_number(raw) == expected


def test_a_truncated_answer_is_reported_as_truncation_only() -> None:
    # cut after "decide": 1 (of 10.5?): in literal replay that would break fraud_score -> decide
    text = '{"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8, "policy_search": 0, "decide": 1'
    row = score_record({"workflow": "refund", "response": text}, SUITE)
    assert not row.valid and row.reason_kinds == ["truncated"] and row.dependency_violations is None
    assert row.requested == SAFE | {"decide": 1.0} and row.makespan is None


def test_psplib_pairs_with_numeric_step_ids() -> None:
    suite = load(J30 / "j301_1.sm")
    workflow = suite.workflows[0]
    reference = solve_reference(workflow, suite.machines[0])
    pairs = [[int(step), start] for step, start in reference.items()]
    row = score_record({"workflow": workflow.id, "response": f"Schedule: {json.dumps(pairs)}"}, suite)
    assert row.valid and row.requested == reference and row.safe
    assert isinstance(parse_starts([[2, 0], [3, 2.5]], workflow.index.keys()), Parsed)
    # a number that is no step of the workflow is not read as one
    assert parse_starts([[99, 0], [100, 1]], workflow.index.keys()) is None


def test_a_schedule_read_from_the_reasoning_says_so() -> None:
    row = score_record({"workflow": "refund", "response": f"<think>{SAFE_JSON}</think>Done."}, SUITE)
    assert row.valid and row.from_reasoning
    row = score_record({"workflow": "refund", "response": f"<think>{ASAP_JSON}</think>{SAFE_JSON}"}, SUITE)
    assert row.valid and not row.from_reasoning and row.requested == SAFE


def test_find_json_returns_spans_in_text_order() -> None:
    text = 'draft {"a": 1}\n```json\n{"a": 2}\n```\nafter {"a": 3} and [1] [x] {"b": [1, 2'
    found = find_json(text)
    assert [d.value for d in found] == [{"a": 1}, {"a": 2}, {"a": 3}, {"b": [1, 2]}]
    assert [d.truncated for d in found] == [False, False, False, True]
    assert text[found[1].start : found[1].end] == '{"a": 2}'


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
