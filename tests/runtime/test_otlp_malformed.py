"""Malformed OTLP exports: span graphs that are not trees, times that are not times, wrong types.

Each is one ``Error:`` naming the file, the span (its name and id) and the rule, never a traceback:
a table of hand-made variants, and a property that corrupts one field or edge of random valid exports.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run
from hypothesis import given
from hypothesis import strategies as st
from otlp_helpers import BOX, EPOCH, TRACE, as_otlp, export, runs, span, tool

from peakopt.models import PeakoptError
from peakopt.oracle import evaluate
from peakopt.runtime.otlp import load_otlp

R, A, B, C = "00000000000000f0", "00000000000000a1", "00000000000000b2", "00000000000000c3"
NAMES = {R: "invoke_agent", A: "search", B: "fetch", C: "answer"}


def base() -> dict[str, Any]:
    """An agent run (a container) with three tool calls: two in parallel, the third linked to both."""
    return export(
        [
            span(R, "invoke_agent", 0.0, 3.0),
            tool(A, "search", 0.0, 1.0, 1, 600, parent=R),
            tool(B, "fetch", 0.0, 2.0, 1, 300, parent=R),
            tool(C, "answer", 2.0, 3.0, 2, 100, parent=R, links=[A, B]),
        ],
        BOX,
    )


def spans_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    return data["resourceSpans"][0]["scopeSpans"][0]["spans"]  # type: ignore[no-any-return]


def by_id(data: dict[str, Any], sid: str) -> dict[str, Any]:
    return next(s for s in spans_of(data) if s["spanId"] == sid)


def setting(sid: str, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set one field of one span (``...`` deletes it)."""

    def change(data: dict[str, Any]) -> None:
        found = by_id(data, sid)
        if value is ...:
            del found[key]
        else:
            found[key] = value

    return change


def linking(sid: str, *targets: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        by_id(data, sid)["links"] += [{"traceId": TRACE, "spanId": t} for t in targets]

    return change


def both(*changes: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        for one in changes:
            one(data)

    return change


def adding(*extra: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        spans_of(data).extend(extra)

    return change


def step_ids(data: dict[str, Any]) -> None:
    """Two steps with one ``peakopt.step.id``, a third after both (once "lists predecessor twice")."""
    for sid in (A, B):
        by_id(data, sid)["attributes"].append({"key": "peakopt.step.id", "value": {"stringValue": "same"}})


def at(where: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Replace what a dotted path of the document holds (``resourceSpans.0.resource``)."""

    def change(data: dict[str, Any]) -> None:
        *parents, last = where.split(".")
        node: Any = data
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = value

    return change


def whole(value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data.clear()
        data.update(value)

    return change


NOW = str(EPOCH)
ARABIC = NOW.translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))
FULLWIDTH = NOW.translate(str.maketrans("0123456789", "０１２３４５６７８９"))
BAD_TIMES: list[tuple[str, Any]] = [
    ("far future", str(10**20)),
    ("just past int64", str(2**63)),
    ("far future number", 10**19),
    ("huge digits", "9" * 5000),
    ("huge number", 10**40),
    ("negative", "-5"),
    ("negative number", -5),
    ("zero", "0"),
    ("word", "soon"),
    ("float string", "1764612000.5"),
    ("exponent string", "1.764612e18"),
    ("float number", 1.764612e18),
    ("superscript", "²"),
    ("superscript tail", NOW[:-1] + "²"),
    ("arabic-indic", ARABIC),
    ("fullwidth", FULLWIDTH),
    ("underscores", "1_764_612_000_000_000_000"),
    ("spaces", f" {NOW} "),
    ("plus", f"+{NOW}"),
    ("empty", ""),
    ("boolean", True),
    ("null", None),
    ("list", [NOW]),
    ("object", {"value": NOW}),
    ("missing", ...),
]
TIME_CASES = [
    pytest.param(setting(A, key, bad), rf"{key} is not", A, id=f"{key[:3]} {name}")
    for key in ("startTimeUnixNano", "endTimeUnixNano")
    for name, bad in BAD_TIMES
]
SPAN = "span 'search' (spanId 00000000000000a1"
GRAPH_CASES = [
    pytest.param(setting(A, "parentSpanId", A), "is its own parent", A, id="self parent"),
    pytest.param(
        setting(R, "parentSpanId", A), "parents form a cycle", R, id="two spans each other's parent"
    ),
    pytest.param(
        adding(
            span("00000000000000d1", "x", 0.0, 1.0, parent="00000000000000d3"),
            span("00000000000000d2", "y", 0.0, 1.0, parent="00000000000000d1"),
            span("00000000000000d3", "z", 0.0, 1.0, parent="00000000000000d2"),
        ),
        "parents form a cycle",
        "00000000000000d1",
        id="three-span parent cycle",
    ),
    pytest.param(
        both(setting(R, "parentSpanId", C), setting(C, "parentSpanId", B), setting(B, "parentSpanId", A)),
        "parents form a cycle",
        R,
        id="four-span parent cycle",
    ),
    pytest.param(setting(B, "spanId", A), "duplicate span id", A, id="duplicate span id"),
    pytest.param(setting(C, "spanId", R), "duplicate span id", R, id="duplicate span id of the container"),
    pytest.param(step_ids, "peakopt.step.id 'same'", "same", id="duplicate step id attribute"),
    pytest.param(linking(C, C), "links to itself", C, id="self link"),
    pytest.param(linking(A, C), "links form a cycle", A, id="two-span link cycle"),
    pytest.param(linking(R, C), "links form a cycle", R, id="a parent linked to its child"),
    pytest.param(both(linking(A, B), linking(B, C)), "links form a cycle", A, id="three-span link cycle"),
    pytest.param(linking(C, "00000000000000ee"), "links to span 00000000000000ee", C, id="missing link"),
    pytest.param(setting(C, "links", [5]), "links.* not a list of objects", C, id="link not an object"),
    pytest.param(
        setting(C, "links", [{"traceId": TRACE, "spanId": 5}]), "link .*spanId", C, id="link id a number"
    ),
    pytest.param(setting(C, "links", [{"spanId": A}]), "link .*traceId", C, id="link without trace"),
    pytest.param(
        setting(A, "startTimeUnixNano", str(EPOCH + 5 * 10**9)), "ends before it starts", A, id="end<start"
    ),
]
TYPE_CASES = [
    pytest.param(whole({"resourceSpans": {}}), "resourceSpans: is not a list", "", id="resourceSpans object"),
    pytest.param(
        whole({"resourceSpans": "x"}), "resourceSpans: is not a list", "", id="resourceSpans string"
    ),
    pytest.param(whole({"resourceSpans": None}), "holds no span", "", id="resourceSpans null: none"),
    pytest.param(
        whole({"resourceSpans": [5]}), r"resourceSpans: is not a list of objects", "", id="entry number"
    ),
    pytest.param(
        at("resourceSpans.0.resource", "x"),
        r"resourceSpans\[0\]\.resource: is not an object",
        "",
        id="resource",
    ),
    pytest.param(
        at("resourceSpans.0.resource.attributes", {}),
        r"resourceSpans\[0\].resource: attributes",
        "",
        id="resource attrs",
    ),
    pytest.param(
        at("resourceSpans.0.resource.attributes", [{"value": {}}]),
        "attributes are not",
        "",
        id="attribute without key",
    ),
    pytest.param(
        at("resourceSpans.0.scopeSpans", {}),
        r"resourceSpans\[0\]\.scopeSpans: is not a list",
        "",
        id="scopeSpans",
    ),
    pytest.param(
        at("resourceSpans.0.scopeSpans.0", []), r"scopeSpans: is not a list of objects", "", id="scope entry"
    ),
    pytest.param(
        at("resourceSpans.0.scopeSpans.0.spans", "x"),
        r"scopeSpans\[0\]\.spans: is not a list",
        "",
        id="spans",
    ),
    pytest.param(
        at("resourceSpans.0.scopeSpans.0.spans.1", 5),
        r"spans: is not a list of objects",
        "",
        id="span number",
    ),
    pytest.param(setting(A, "name", 5), "name is not a string", f"spanId {A}", id="name number"),
    pytest.param(setting(A, "name", ["search"]), "name is not a string", f"spanId {A}", id="name list"),
    pytest.param(setting(A, "traceId", 5), "has no traceId", A, id="traceId number"),
    pytest.param(setting(A, "traceId", ...), "has no traceId", A, id="traceId missing"),
    pytest.param(setting(A, "spanId", 161), "has no spanId", "spans[1]", id="spanId number"),
    pytest.param(setting(A, "spanId", ""), "has no spanId", "spans[1]", id="spanId empty"),
    pytest.param(setting(A, "parentSpanId", 5), "parentSpanId is not a string", A, id="parent number"),
    pytest.param(setting(A, "parentSpanId", [R]), "parentSpanId is not a string", A, id="parent list"),
    pytest.param(setting(A, "attributes", {}), "attributes are not", A, id="attributes object"),
    pytest.param(setting(A, "links", "x"), "links is not a list", A, id="links string"),
    pytest.param(setting(A, "status", "ERROR"), "status is not an object", A, id="status string"),
    pytest.param(setting(A, "status", {"code": [2]}), "status code", A, id="status code list"),
    pytest.param(
        setting(A, "attributes", [{"key": "peakopt.demand.cpu", "value": {"intValue": "²"}}]),
        "peakopt.demand.cpu is not a finite number",
        A,
        id="demand superscript",
    ),
    pytest.param(
        setting(A, "attributes", [{"key": "peakopt.demand.cpu", "value": {"intValue": "١"}}]),
        "peakopt.demand.cpu is not a finite number",
        A,
        id="demand arabic-indic",
    ),
    pytest.param(
        setting(A, "attributes", [{"key": "peakopt.demand.cpu", "value": {"intValue": "9" * 5000}}]),
        "peakopt.demand.cpu is not a finite number",
        A,
        id="demand huge digits",
    ),
    pytest.param(
        setting(A, "attributes", [{"key": "peakopt.demand.cpu", "value": {"intValue": 10**400}}]),
        "peakopt.demand.cpu is not a finite number",
        A,
        id="demand huge int",
    ),
    pytest.param(
        setting(A, "attributes", [{"key": "peakopt.demand.cpu", "value": {"intValue": True}}]),
        "peakopt.demand.cpu is not a finite number",
        A,
        id="demand boolean",
    ),
    pytest.param(
        setting(A, "attributes", [{"key": "peakopt.demand.cpu", "value": {"doubleValue": "NaN"}}]),
        "peakopt.demand.cpu is not a finite number",
        A,
        id="demand NaN string",
    ),
]


def attribute(sid: str, key: str, value: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        found = by_id(data, sid)["attributes"]
        found[:] = [a for a in found if a["key"] != key] + [{"key": key, "value": value}]

    return change


#: Values the workflow built from the spans refuses: the error names the span it came from.
VALUE_CASES = [
    pytest.param(attribute(A, "peakopt.step.id", {"stringValue": ""}), "id", A, id="empty step id"),
    pytest.param(
        attribute(A, "peakopt.demand.cpu", {"intValue": "-1"}), "demand cpu", A, id="negative demand"
    ),
    pytest.param(
        attribute(A, "peakopt.demand.cpu", {"doubleValue": -0.5}), "demand cpu", A, id="negative double"
    ),
]


def named(err: str, sid: str) -> bool:
    """Whether an error names the span ``sid`` (its id and, when it has one, its name)."""
    if sid.startswith("spans["):
        return sid in err
    if sid not in NAMES:
        return sid in err
    return f"spanId {sid}" in err and f"{NAMES[sid]!r}" in err


@pytest.mark.parametrize(("change", "rule", "who"), TIME_CASES + GRAPH_CASES + TYPE_CASES + VALUE_CASES)
def test_each_malformed_export_is_one_error_naming_the_file_the_span_and_the_rule(
    tmp_path: Path, change: Callable[[dict[str, Any]], None], rule: str, who: str
) -> None:
    data = base()
    change(data)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(PeakoptError, match=rule) as caught:
        load_otlp(path)
    assert named(str(caught.value), who), str(caught.value)
    code, out, err = run("score", str(path))
    assert code == 1 and out == "", err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {path}: "), err


@pytest.mark.parametrize("where", ["startTimeUnixNano", "attributes"])
def test_a_json_integer_of_more_digits_than_python_reads_is_one_error(tmp_path: Path, where: str) -> None:
    """Python converts no integer of over 4,300 digits: the export is refused in words, not with its error."""
    data = base()
    huge = "9" * 5000
    if where == "attributes":
        by_id(data, A)["attributes"] = [{"key": "peakopt.demand.cpu", "value": {"intValue": 0}}]
    else:
        by_id(data, A)[where] = 0
    text = (
        json.dumps(data)
        .replace('"intValue": 0', f'"intValue": {huge}')
        .replace(f'"{where}": 0', f'"{where}": {huge}')
    )
    path = tmp_path / "export.json"
    path.write_text(text)
    code, out, err = run("score", str(path))
    lines = err.strip().splitlines()
    assert code == 1 and out == "" and len(lines) == 1 and lines[0].startswith(f"Error: {path}: "), err
    assert "digits" in err


def test_the_valid_base_export_reads(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(base()))
    trace = load_otlp(path)
    assert [t.id for t in trace.workflow.tasks] == ["search", "fetch", "answer"]


def test_a_span_whose_parent_is_not_in_the_export_is_a_root(tmp_path: Path) -> None:
    # a remote parent (the agent's span in another service) is common in real exports: the
    # container left out, its three calls are roots, read as they ran
    data = base()
    spans_of(data)[:] = [s for s in spans_of(data) if s["spanId"] != R]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(data))
    trace = load_otlp(path)
    assert [t.id for t in trace.workflow.tasks] == ["search", "fetch", "answer"]
    code, _, err = run("score", str(path))
    assert code == 0, err


def test_times_at_the_ends_of_the_stated_range_read(tmp_path: Path) -> None:
    """One nanosecond after the epoch, and the last nanosecond an int64 holds (2262-04-11)."""
    for first, last in ((1, 2), (2**63 - 3, 2**63 - 1)):
        data = base()
        for k, found in enumerate(spans_of(data)):
            found["startTimeUnixNano"] = str(first)
            found["endTimeUnixNano"] = str(first if k else last)
        found = by_id(data, C)
        found["links"] = []
        path = tmp_path / "export.json"
        path.write_text(json.dumps(data))
        assert len(load_otlp(path).steps) == 3


# --- the property: one corruption of a valid export is refused, naming the span --------------

Export = dict[str, Any]


def descendants(spans: list[dict[str, Any]], k: int, links: bool) -> list[int]:
    """Spans reached from span ``k`` by child-of (and, with ``links``, linked-by) steps, ``k`` first."""
    ids = [s["spanId"] for s in spans]
    found, stack = [k], [k]
    while stack:
        here = ids[stack.pop()]
        for j, other in enumerate(spans):
            linked = links and any(link["spanId"] == here for link in other["links"])
            if j not in found and (other["parentSpanId"] == here or linked):
                found.append(j)
                stack.append(j)
    return found


BAD = [value for name, value in BAD_TIMES if name != "missing"]


@st.composite
def corruptions(draw: st.DrawFn, data: Export) -> tuple[Export, int, str | None]:
    """``data`` with one field or edge of a span broken: the copy, the span, the kind (None: valid)."""
    data = copy.deepcopy(data)
    spans = spans_of(data)
    k = draw(st.integers(0, len(spans) - 1))
    target = spans[k]
    others = [j for j in range(len(spans)) if j != k]
    kinds = ["time", "order", "self parent", "parent cycle", "link cycle", "missing link"]
    kinds += ["type", "neutral"] + ["duplicate id"] * bool(others)
    kind = draw(st.sampled_from(kinds))
    if kind == "time":
        key = draw(st.sampled_from(["startTimeUnixNano", "endTimeUnixNano"]))
        bad = draw(st.sampled_from([*BAD, ...]))
        if bad is ...:
            del target[key]
        else:
            target[key] = bad
    elif kind == "order":
        target["endTimeUnixNano"] = str(int(target["startTimeUnixNano"]) - draw(st.integers(1, 10**9)))
    elif kind == "self parent":
        target["parentSpanId"] = target["spanId"]
    elif kind == "parent cycle":
        target["parentSpanId"] = spans[draw(st.sampled_from(descendants(spans, k, links=False)))]["spanId"]
    elif kind == "link cycle":
        target["links"].append(
            {
                "traceId": TRACE,
                "spanId": spans[draw(st.sampled_from(descendants(spans, k, links=True)))]["spanId"],
            }
        )
    elif kind == "missing link":
        target["links"].append({"traceId": TRACE, "spanId": "00000000deadbeef"})
    elif kind == "duplicate id":
        target["spanId"] = spans[draw(st.sampled_from(others))]["spanId"]
    elif kind == "type":
        key = draw(st.sampled_from(["name", "parentSpanId", "links", "attributes", "status"]))
        target[key] = draw(st.sampled_from([5, 1.5, True, [5], {"x": 1}] if key != "links" else [5, "x", {}]))
        if key in ("attributes", "links") and isinstance(target[key], list):
            target[key] = {"x": 1}
        if key == "status" and isinstance(target[key], dict):
            target[key] = [2]
    else:  # the same run written another way: numbers for times, a link to another trace, an unknown key
        change = draw(st.sampled_from(["numbers", "foreign link", "unknown key", "nulls"]))
        if change == "nulls":  # proto3 JSON: null is the field's default (an empty list, no status)
            empty = [key for key in ("links", "attributes", "status") if not target[key]]
            target.update(dict.fromkeys(empty, None))
            if target["parentSpanId"] == "":  # a root's parent id, too
                target["parentSpanId"] = None
        elif change == "numbers":
            for key in ("startTimeUnixNano", "endTimeUnixNano"):
                target[key] = int(target[key])
        elif change == "foreign link":
            target["links"].append(
                {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": target["spanId"]}
            )
        else:
            target["droppedEventsCount"] = 3
        return data, k, None
    return data, k, kind


def score_of(path: Path) -> dict[str, Any]:
    trace = load_otlp(path)
    workflow, schedule = trace.realised()
    keep = {"valid", "makespan", "cva", "avoidable_cva", "safe", "mru", "resources"}
    return evaluate(workflow, trace.machine, schedule).model_dump(include=keep)


@given(runs(), st.booleans(), st.data())
def test_one_corruption_of_a_valid_export_is_refused_naming_the_span_or_changes_nothing(
    run_: tuple[Any, Any, dict[str, int]], container: bool, data: st.DataObject
) -> None:
    workflow, machine, starts = run_
    valid = as_otlp(workflow, machine, starts, container)
    broken, k, kind = data.draw(corruptions(valid))
    with tempfile.TemporaryDirectory() as folder:
        before, path = Path(folder) / "valid.json", Path(folder) / "export.json"
        before.write_text(json.dumps(valid))
        path.write_text(json.dumps(broken, ensure_ascii=False), encoding="utf-8")
        if kind is None:
            assert score_of(path) == score_of(before)
            return
        with pytest.raises(PeakoptError) as caught:
            load_otlp(path)
        message = str(caught.value)
        target = spans_of(broken)[k]
        tokens = [f"spans[{k}]", str(spans_of(valid)[k]["spanId"]), str(target.get("spanId"))]
        assert any(token in message for token in tokens), (kind, message)
        code, out, err = run("score", str(path))
        lines = err.strip().splitlines()
        assert code == 1 and out == "" and len(lines) == 1, (kind, err)
        assert lines[0].startswith(f"Error: {path}: "), (kind, err)
