"""Why an LLM answer is invalid: each reason names the real cause (its kind and the culprit).

One table over the shapes answers come in: keys that are the steps' tool names,
another case's step ids or near misses of the ids; values that bear a unit, are
clock times, words, null or lists; JSON left open before a closing code fence
against JSON that the text really ends inside; schedules nested under keys. Each
row states the kind of the first reason and a piece of its message (or that the
answer is valid).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from peakopt.instances import load
from peakopt.oracle.answers.parse import parse_response, parse_starts
from peakopt.oracle.judge.verdict import Violation
from peakopt.oracle.tables.score_rows import score_prediction, score_record

SUITE = load("bundled:refund")
STEPS = ("lookup_order", "fraud_score", "history_scan", "policy_search", "decide")
TOOLS = (
    "orders.get_order",
    "risk.fraud_score",
    "warehouse.scan_history",
    "kb.search_policies",
    "refunds.decide",
)
#: The step ids of another case (the default suite's first workflow).
OTHER = ("severe_alerts", "read_file", "search_files", "summarise", "notify")
SAFE = {"lookup_order": 0.0, "fraud_score": 0.0, "history_scan": 4.8, "policy_search": 0.0, "decide": 8.0}
SAFE_BODY = json.dumps(SAFE)[1:-1]  # the pairs, without the braces


def with_values(value: Any, keys: tuple[str, ...] = STEPS) -> str:
    return json.dumps(dict.fromkeys(keys, value))


def renamed(keys: tuple[str, ...]) -> dict[str, float]:
    return dict(zip(keys, SAFE.values(), strict=True))


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    kind: str | None  # the first reason's kind; None: valid
    message: str = ""  # a piece of that reason


CASES = [
    # --- keys ---
    Case(
        "tool names as keys",
        json.dumps(renamed(TOOLS)),
        "unknown",
        "unknown step ids: 'orders.get_order' (no known id is near), 'risk.fraud_score'",
    ),
    Case(
        "a tool name near its step id",
        json.dumps(renamed(TOOLS)),
        "unknown",
        "'risk.fraud_score' (nearest known id: 'fraud_score')",
    ),
    Case(
        "tool names in a list of objects",
        json.dumps([{"step": t, "start": s} for t, s in renamed(TOOLS).items()]),
        "unknown",
        "'refunds.decide' (nearest known id: 'decide')",
    ),
    Case(
        "tool names as pairs",
        json.dumps([[t, s] for t, s in renamed(TOOLS).items()]),
        "unknown",
        "unknown step ids: 'orders.get_order'",
    ),
    Case(
        "tool names under a schedule key",
        json.dumps({"schedule": renamed(TOOLS)}),
        "unknown",
        "unknown step ids: 'orders.get_order'",
    ),
    Case(
        "tool names nested two keys deep",
        json.dumps({"answer": {"schedule": renamed(TOOLS)}}),
        "unknown",
        "unknown step ids: 'orders.get_order'",
    ),
    Case(
        "another case's step ids",
        json.dumps(renamed(OTHER)),
        "unknown",
        "; the workflow's ids: 'lookup_order', 'fraud_score', 'history_scan'",
    ),
    Case(
        "another case's ids with unit values",
        with_values("1.5 s", OTHER),
        "unknown",
        "unknown step ids: 'severe_alerts'",
    ),
    Case(
        "one near-miss id among known ones",
        json.dumps(SAFE | {"fraud_scor": 0.0}).replace('"fraud_score": 0.0, ', ""),
        "unknown",
        "unknown step ids: 'fraud_scor' (nearest known id: 'fraud_score')",
    ),
    Case(
        "a hallucinated extra step",
        json.dumps(SAFE | {"notify_customer": 8.6}),
        "unknown",
        "unknown step ids: 'notify_customer' (no known id is near)",
    ),
    Case(
        "hyphens for underscores",
        json.dumps({k.replace("_", "-"): v for k, v in SAFE.items()}),
        "unknown",
        "'lookup-order' (nearest known id: 'lookup_order')",
    ),
    Case(
        "capitalised ids",
        json.dumps({k.title(): v for k, v in SAFE.items()}),
        "unknown",
        "'Lookup_Order' (nearest known id: 'lookup_order')",
    ),
    Case(
        "near-miss ids in a list",
        json.dumps([{"id": k + "s", "start": v} for k, v in SAFE.items()]),
        "unknown",
        "'lookup_orders' (nearest known id: 'lookup_order')",
    ),
    # --- values ---
    Case("minutes as 'm'", with_values("0.08m"), "unit", "start '0.08m': the unit 'm' is ambiguous"),
    Case(
        "one value in 'm'",
        json.dumps(SAFE | {"history_scan": "4.8m"}),
        "unit",
        "step 'history_scan': start '4.8m': the unit 'm' is ambiguous",
    ),
    Case("clock times", with_values("00:00:04.8"), "unit", "start '00:00:04.8' is a clock time"),
    Case("minute:second times", with_values("00:04.8"), "unit", "start '00:04.8' is a clock time"),
    Case("an unknown unit", with_values("5 GB"), "unit", "start '5 GB': unknown unit 'GB'"),
    Case(
        "clock times in start objects",
        json.dumps({k: {"start": "00:00:0" + str(v)} for k, v in SAFE.items()}),
        "unit",
        "is a clock time",
    ),
    Case(
        "clock times in a list",
        json.dumps([{"id": k, "start": f"0:00:{v}"} for k, v in SAFE.items()]),
        "unit",
        "start '0:00:0.0' is a clock time",
    ),
    Case("seconds with 's' are read", json.dumps({k: f"{v}s" for k, v in SAFE.items()}), None),
    Case("milliseconds are read", json.dumps({k: f"{int(v * 1000)}ms" for k, v in SAFE.items()}), None),
    Case(
        "words",
        with_values("soon"),
        "non_numeric",
        "step 'lookup_order': start 'soon' is not a finite number",
    ),
    Case(
        "one word among numbers",
        json.dumps(SAFE | {"decide": "after the others"}),
        "non_numeric",
        "step 'decide': start 'after the others'",
    ),
    Case("null values", with_values(None), "non_numeric", "step 'lookup_order': start null is not a number"),
    Case("one null value", json.dumps(SAFE | {"decide": None}), "non_numeric", "step 'decide': start null"),
    Case("lists as values", with_values([0, 4.8]), "non_numeric", "start [0, 4.8] is not a number"),
    Case("booleans as values", with_values(True), "non_numeric", "start true is not a number"),
    Case("an overflowing number", json.dumps(SAFE).replace("8.0", "1e400"), "non_numeric", "'decide'"),
    # --- structure ---
    Case(
        "an object left open before the closing fence",
        '```json\n{"schedule": {' + SAFE_BODY + "\n```",
        "unclosed",
        "not closed before the code fence ends ('}}' is missing)",
    ),
    Case(
        "a list left open before the closing fence",
        "```json\n" + json.dumps([{"id": k, "start": v} for k, v in SAFE.items()])[:-1] + "\n```\n",
        "unclosed",
        "(']' is missing)",
    ),
    Case(
        "left open before a fence, prose after",
        'Schedule:\n```json\n{"schedule": {' + SAFE_BODY + "}\n```\nThis keeps memory low.",
        "unclosed",
        "('}' is missing)",
    ),
    Case(
        "left open before a tilde fence",
        "~~~json\n{" + SAFE_BODY + "\n~~~",
        "unclosed",
        "not closed before the code fence ends",
    ),
    Case(
        "the text really ends inside the JSON",
        '```json\n{"schedule": {' + SAFE_BODY,
        "truncated",
        "cut off inside its JSON (truncated output)",
    ),
    Case("truly cut mid-number", "{" + SAFE_BODY[:-2], "truncated", "truncated output"),
    Case(
        "truly cut mid-key",
        '```json\n{"lookup_order": 0, "fraud_score": 0, "history_sc',
        "truncated",
        "truncated output",
    ),
    Case("the schedule nested under two keys", json.dumps({"answer": {"schedule": SAFE}}), None),
    Case("the schedule nested under a final key", json.dumps({"final": {"schedule": SAFE}}), None),
    Case(
        "tool names beside the schedule are notes",
        json.dumps({"schedule": SAFE, "tools": {t: t.split(".")[0] for t in TOOLS}}),
        None,
    ),
    Case(
        "figures beside the schedule are notes",
        json.dumps({"schedule": SAFE, "resources": {"memory_mb": 512, "cpu": 2}}),
        None,
    ),
    Case(
        "JSON without any schedule",
        '{"answer": "run everything in parallel", "confidence": "high"}',
        "parse",
        "the response's JSON holds no schedule",
    ),
    Case("no JSON at all", "Run lookup first, then decide.", "parse", "no JSON in the response"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_first_reason_names_the_real_cause(case: Case) -> None:
    row = score_record({"workflow": "refund", "source": "llm", "response": case.text}, SUITE)
    if case.kind is None:
        assert row.valid, row.reasons
        return
    assert not row.valid
    assert case.message in row.reasons[0], row.reasons
    assert case.kind in row.reason_kinds and "parse" not in set(row.reason_kinds) - {case.kind}
    read = parse_response(case.text, STEPS)  # the reading's own first reason, before the replay's
    first = read if isinstance(read, Violation) else read.problems[0]
    assert first.kind == case.kind, first


def test_the_table_covers_every_shape() -> None:
    assert len(CASES) >= 40
    kinds = {c.kind for c in CASES}
    assert kinds == {None, "unknown", "unit", "non_numeric", "unclosed", "truncated", "parse"}


def test_a_records_starts_get_the_same_reasons() -> None:
    parsed = parse_starts(renamed(TOOLS), STEPS)
    assert parsed is not None and [p.kind for p in parsed.problems] == ["unknown"]
    parsed = parse_starts(dict.fromkeys(STEPS, "00:00:01"), STEPS)
    assert parsed is not None and {p.kind for p in parsed.problems} == {"unit"}


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('```json\n{"dependencies": {"decide": ["lookup_order"]\n```', "unclosed"),
        ('{"dependencies": {"decide": ["lookup_order"', "truncated"),
    ],
)
def test_a_plan_left_open_before_its_fence_is_not_called_cut_off(text: str, kind: str) -> None:
    row = score_prediction({"workflow": "refund", "response": text}, SUITE)
    assert not row.valid and row.reason_kinds == [kind], row.reasons
