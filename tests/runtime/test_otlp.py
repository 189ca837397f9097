"""The OpenTelemetry importer (peakopt.runtime.otlp) on hand-written OTLP JSON exports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import jsonl, run
from hypothesis import given
from hypothesis import strategies as st
from otlp_helpers import BOX, TRACE, agent, as_otlp, attrs, export, runs, span, tool, write

from peakopt.instances import InputError
from peakopt.models import Machine, Schedule, Workflow
from peakopt.oracle import evaluate
from peakopt.runtime.otlp import load_otlp, to_trace
from peakopt.runtime.spans import pick, read_spans
from peakopt.runtime.trace import Trace


def test_a_container_is_no_step_and_links_are_dependencies(tmp_path: Path) -> None:
    trace = load_otlp(agent(tmp_path))
    workflow = trace.workflow
    assert [t.id for t in workflow.tasks] == ["search", "fetch", "answer"]
    assert workflow.task("answer").depends_on == ("search", "fetch")
    assert workflow.task("search").depends_on == () and workflow.task("search").tool == "search"
    assert workflow.task("fetch").demand == {"cpu": 1.0, "memory_mb": 300.0}
    assert workflow.id == "invoke_agent" and workflow.meta["otlp"]["containers"] == 1
    assert trace.machine == Machine(name="box", capacity={"cpu": 4, "memory_mb": 1000})
    assert {s.id: (s.start, s.end) for s in trace.steps} == {
        "search": (0.0, 1.0),
        "fetch": (0.0, 2.0),
        "answer": (2.0, 3.0),
    }
    assert trace.policy == "otlp:agent" and trace.status == "ok"


def test_a_child_after_its_parent_ends_depends_on_it_and_a_link_to_a_running_span_is_no_edge(
    tmp_path: Path,
) -> None:
    spans = [
        tool("a", "plan", 0.0, 1.0, 1, 1),
        tool("b", "job", 1.5, 2.0, 1, 1, parent="a"),  # queued by a, ran after it: caused by it
        tool("c", "watch", 0.5, 3.0, 1, 1, links=["a"]),  # linked to a while a still ran: related only
    ]
    trace = load_otlp(write(tmp_path, export(spans, BOX)))
    assert trace.workflow.task("job").depends_on == ("plan",)
    assert trace.workflow.task("watch").depends_on == ()
    assert trace.workflow.meta["otlp"]["dropped_links"] == 1
    assert trace.workflow.meta["otlp"]["containers"] == 0


def test_nested_containers_pass_their_dependencies_to_their_steps(tmp_path: Path) -> None:
    spans = [
        span("root", "run", 0.0, 4.0),
        span("p1", "phase one", 0.0, 2.0, parent="root"),
        tool("a", "x", 0.0, 1.0, 1, 1, parent="p1"),
        tool("b", "y", 0.5, 2.0, 1, 1, parent="p1"),
        span("p2", "phase two", 2.0, 4.0, parent="root", links=["p1"]),
        tool("c", "z", 2.0, 3.0, 1, 1, parent="p2"),
        tool("d", "x", 2.5, 4.0, 1, 1, parent="p2"),
    ]
    workflow = load_otlp(write(tmp_path, export(spans, BOX))).workflow
    assert [t.id for t in workflow.tasks] == ["x", "y", "z", "x#2"]  # repeats numbered in start order
    assert workflow.task("z").depends_on == ("x", "y")
    assert workflow.task("x#2").depends_on == ("x", "y")
    assert workflow.meta["otlp"]["containers"] == 3


def test_attributes_give_ids_measured_usage_and_failures(tmp_path: Path) -> None:
    a = tool("a", "call", 0.0, 1.0, 1, 1, attributes={"peakopt.step.id": "first"})
    a["attributes"] += attrs(
        {"peakopt.usage.cpu_avg": 0.5, "peakopt.usage.cpu_peak": 1.5, "peakopt.usage.memory_peak_mb": 42}
    )
    b = tool("b", "call", 1.0, 2.0, 1, 1, links=["a"], error=True)
    trace = load_otlp(write(tmp_path, export([a, b], BOX)))
    assert [s.id for s in trace.steps] == ["first", "call"]
    assert trace.steps[0].usage is not None and trace.steps[0].usage.memory_peak_mb == 42
    assert trace.steps[1].status == "failed" and trace.steps[1].error == "boom" and trace.status == "failed"


def test_json_lines_of_exports_are_read_together_and_the_trace_is_picked(tmp_path: Path) -> None:
    other = "0af7651916cd43dd8448eb211c80319c"
    lines = [
        json.dumps(export([tool("a", "one", 0.0, 1.0, 1, 1)], BOX)),
        json.dumps(export([tool("b", "two", 1.0, 2.0, 1, 1, links=["a"])], BOX)),
        json.dumps(export([tool("z", "elsewhere", 0.0, 5.0, 1, 1, trace=other)], BOX)),
    ]
    path = write(tmp_path, "\n".join(lines) + "\n", "spans.jsonl")
    with pytest.raises(InputError, match=f"holds 2 traces: pick one with --trace-id .*{TRACE} \\(2 spans\\)"):
        load_otlp(path)
    assert [t.id for t in load_otlp(path, trace_id=TRACE).workflow.tasks] == ["one", "two"]
    assert [t.id for t in load_otlp(path, trace_id=other).workflow.tasks] == ["elsewhere"]
    with pytest.raises(InputError, match="trace 'nope': is not in the export"):
        load_otlp(path, trace_id="nope")


def test_a_file_of_other_json_is_not_an_export(tmp_path: Path) -> None:
    with pytest.raises(InputError, match='is not an OTLP trace export \\(no "resourceSpans"\\)'):
        load_otlp(write(tmp_path, {"spans": []}))


def test_the_machine_given_replaces_the_exports_and_one_is_needed(tmp_path: Path) -> None:
    path = write(tmp_path, export([tool("a", "one", 0.0, 1.0, 1, 1)]))
    with pytest.raises(InputError, match=r"names no machine .* give one with --machine"):
        load_otlp(path)
    machine = Machine(name="m", capacity={"cpu": 1})
    assert load_otlp(path, machine=machine).machine == machine


@pytest.mark.parametrize(
    ("data", "rule"),
    [
        ({"resourceSpans": []}, "holds no span"),
        (export([{**tool("a", "x", 0.0, 1.0, 1, 1), "traceId": ""}], BOX), "span 'x' .*: has no traceId"),
        (
            export([{**tool("a", "x", 0.0, 1.0, 1, 1), "startTimeUnixNano": "soon"}], BOX),
            "startTimeUnixNano is not",
        ),
        (
            export([{**tool("a", "x", 0.0, 1.0, 1, 1), "endTimeUnixNano": "0"}], BOX),
            "endTimeUnixNano is not a time: a whole number of nanoseconds",
        ),
        (export([tool("a", "x", 2.0, 1.0, 1, 1)], BOX), "ends before it starts"),
        (
            export([tool("a", "x", 0.0, 1.0, "lots", 1)], BOX),
            "attribute peakopt.demand.cpu is not a finite number",
        ),
        (
            export([tool("a", "x", 0.0, 1.0, 1, 1), tool("a", "y", 0.0, 1.0, 1, 1)], BOX),
            "repeats the spanId a of .*: a duplicate span id",
        ),
        (export([tool("a", "x", 0.0, 1.0, 1, 1)], {"cpu": -1}), "capacity"),
    ],
)
def test_bad_exports_are_one_error_naming_the_file_the_span_and_the_rule(
    tmp_path: Path, data: dict[str, Any], rule: str
) -> None:
    path = write(tmp_path, data)
    with pytest.raises(InputError, match=rule):
        load_otlp(path)
    code, _, err = run("score", str(path))
    assert code == 1 and err.count("Error:") == 1 and str(path) in err and "Traceback" not in err


def test_score_reads_an_export_on_a_machine_of_the_inputs(tmp_path: Path) -> None:
    path = write(tmp_path, export([tool("a", "one", 0.0, 1.0, 1, 4096), tool("b", "two", 1.0, 3.0, 1, 3072)]))
    code, out, err = run("score", "bundled:refund", str(path), "--machine", "worker", "--json")
    assert code == 0, err
    (row,) = jsonl(out)
    # nothing ties the two steps: together (7 of 8 GiB) they take 2 s instead of 3
    assert row["machine"] == "worker" and row["safe"] and row["makespan"] == 3.0
    assert row["gap"] == pytest.approx(0.5) and row["efficiency"] == pytest.approx(2 / 3)
    code, _, err = run("score", str(path))
    assert code == 1 and "give one with --machine" in err


# --- the property: a schedule written as OTLP reads back as itself ---------------------------


@given(runs(), st.booleans())
def test_a_run_written_as_otlp_reads_back_with_its_structure_starts_and_score(
    run_: tuple[Workflow, Machine, dict[str, int]], container: bool
) -> None:
    workflow, machine, starts = run_
    spans = read_spans(json.dumps(as_otlp(workflow, machine, starts, container)), "run.json")
    trace: Trace = to_trace(pick(spans, None, "run.json"), "run.json")
    got, ran = trace.realised()
    assert {t.id: set(t.depends_on) for t in got.tasks} == {t.id: set(t.depends_on) for t in workflow.tasks}
    assert {t.id: (t.length, t.demand) for t in got.tasks} == {
        t.id: (t.length, t.demand) for t in workflow.tasks
    }
    first = min(starts.values())
    shifted = {k: float(v - first) for k, v in starts.items()}
    assert ran.starts == shifted
    want = evaluate(workflow, machine, Schedule(workflow=workflow.id, machine=machine.name, starts=shifted))
    have = evaluate(got, trace.machine, ran)
    assert trace.machine == machine
    keep = ("valid", "makespan", "cva", "avoidable_cva", "safe", "mru", "resources")
    assert have.model_dump(include=set(keep)) == want.model_dump(include=set(keep))


def test_other_commands_say_an_export_is_for_score(tmp_path: Path) -> None:
    path = agent(tmp_path)
    code, _, err = run("validate", str(path))
    assert code == 1 and err.strip() == (
        f"Error: {path}: is an OpenTelemetry trace export (OTLP JSON), not a workflow or a suite: "
        "score it with peakopt score"
    )
