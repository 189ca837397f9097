"""OpenTelemetry out (peakopt.runtime.telemetry): spans of a governor's calls and of a run, read back."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from cli_helpers import jsonl, run
from governor_helpers import MACHINE, Planned, run_workload, workloads
from hypothesis import HealthCheck, given, settings

from peakopt.models import Machine, Workflow
from peakopt.oracle import evaluate
from peakopt.runtime.controller import run_workflow
from peakopt.runtime.governor import Governor
from peakopt.runtime.otlp import load_otlp, to_trace
from peakopt.runtime.spans import read_spans
from peakopt.runtime.telemetry import GovernorSpans, TelemetryError, export_trace, otlp_json, traces_url
from peakopt.runtime.trace import Trace, trace_json
from peakopt.solver.heuristics.online import online_policy

KEEP = {"valid", "makespan", "cva", "avoidable_cva", "safe", "mru", "resources", "dependency_violations"}


def same_score(mine: Trace, back: Trace) -> None:
    """The export reads back as the trace: steps, dependencies, demands, times and the oracle's score."""
    workflow, schedule = mine.realised()
    got, ran = back.realised()
    assert ran.starts == schedule.starts
    assert {t.id: set(t.depends_on) for t in got.tasks} == {t.id: set(t.depends_on) for t in workflow.tasks}
    assert {t.id: (t.length, t.demand) for t in got.tasks} == {
        t.id: (t.length, t.demand) for t in workflow.tasks
    }
    assert {s.id: s.status for s in back.steps} == {s.id: s.status for s in mine.ran}
    assert back.machine.capacity == mine.machine.capacity
    want = evaluate(workflow, mine.machine, schedule).model_dump(include=KEEP)
    assert evaluate(got, back.machine, ran).model_dump(include=KEEP) == want


def governed_run(calls: list[Planned], target: Path) -> Trace:
    governor = Governor(MACHINE, name="agent-turn")
    spans = GovernorSpans(governor, target)
    asyncio.run(run_workload(governor, calls))
    spans.close()
    return governor.trace()


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(calls=workloads(most=10))
def test_a_governors_spans_read_back_to_the_same_score(calls: list[Planned], tmp_path: Path) -> None:
    target = tmp_path / "spans.jsonl"
    trace = governed_run(calls, target)
    if not trace.ran:
        assert not target.read_text().strip()
        return
    back = load_otlp(target)
    assert back.workflow.id == "agent-turn" and back.machine.name == MACHINE.name
    same_score(trace, back)


def test_peakopt_score_gives_the_export_the_score_of_the_trace(tmp_path: Path) -> None:
    calls = [
        Planned(0.0, {"memory_mb": 600.0}, 0.02, False, "ok", 0.0),
        Planned(0.0, {"memory_mb": 600.0}, 0.01, True, "ok", 0.0),
        Planned(0.0, {"memory_mb": 300.0, "cpu": 1.0}, 0.01, False, "ok", 0.0, (0,)),
    ]
    trace = governed_run(calls, tmp_path / "spans.jsonl")
    (tmp_path / "trace.json").write_text(trace_json(trace))
    rows = []
    for name in ("trace.json", "spans.jsonl"):
        code, out, err = run("score", str(tmp_path / name), "--json")
        assert code == 0, err
        (row,) = jsonl(out)
        rows.append(row)
    keep = ("makespan", "safe", "avoidable_cva", "gap", "efficiency", "machine", "workflow")
    assert {k: rows[1][k] for k in keep} == {k: rows[0][k] for k in keep}
    assert rows[0]["safe"] and rows[0]["efficiency"] > 0


def test_a_controlled_runs_trace_exports_to_the_same_score(tmp_path: Path) -> None:
    workflow = Workflow.model_validate(
        {
            "id": "fan-out",
            "tasks": [
                {"id": "plan", "duration": 0.01, "demand": {"memory_mb": 100}},
                *(
                    {
                        "id": f"t{k}",
                        "tool": "embed",
                        "duration": 0.01,
                        "demand": {"memory_mb": 600},
                        "depends_on": ["plan"],
                    }
                    for k in range(3)
                ),
                {"id": "merge", "duration": 0.0, "demand": {"cpu": 1}, "depends_on": ["t0", "t1", "t2"]},
            ],
        }
    )

    async def sleep() -> None:
        await asyncio.sleep(0.01)

    steps = {t.id: sleep for t in workflow.tasks}
    trace = run_workflow(workflow, MACHINE, online_policy("admission", workflow, MACHINE), steps)
    target = tmp_path / "run.jsonl"
    assert export_trace(trace, target) == len(workflow.tasks)
    back = load_otlp(target)
    # an export's times start at its first span (the controller's first start is some µs after its 0)
    first = min(s.start or 0.0 for s in trace.ran)
    moved = [
        s.model_copy(
            update={"start": round((s.start or 0.0) - first, 6), "end": round((s.end or 0.0) - first, 6)}
        )
        for s in trace.steps
    ]
    same_score(trace.model_copy(update={"steps": tuple(moved)}), back)
    assert {t.id: t.tool for t in back.workflow.tasks}["t1"] == "embed"


def test_spans_go_to_an_otlp_http_collector(tmp_path: Path, httpserver) -> None:  # type: ignore[no-untyped-def]
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    httpserver.expect_request("/v1/traces", method="POST").respond_with_data("", status=200)
    calls = [
        Planned(0.0, {"memory_mb": 900.0}, 0.01, k % 2 == 0, "fail" if k == 3 else "ok", 0.0)
        for k in range(4)
    ]
    trace = governed_run(calls, httpserver.url_for("/"))
    documents = []
    for request, _ in httpserver.log:
        message = ExportTraceServiceRequest()
        message.ParseFromString(request.get_data())
        documents.append(json.dumps(otlp_json(message)))
    spans = read_spans("\n".join(documents), "collector")
    same_score(trace, to_trace(spans, "collector"))


@pytest.mark.parametrize(
    ("target", "url"),
    [
        ("http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces"),
        ("http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/traces"),
        ("https://otel.example/custom/path", "https://otel.example/custom/path"),
    ],
)
def test_a_bare_collector_gets_the_traces_path(target: str, url: str) -> None:
    assert traces_url(target) == url


def test_without_the_sdk_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk", None)
    with pytest.raises(TelemetryError, match=r"pip install 'peakopt\[otel\]'"):
        GovernorSpans(Governor(Machine(name="m", capacity={"cpu": 1})), tmp_path / "x.jsonl")


def test_an_unwritable_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TelemetryError, match="cannot be written"):
        GovernorSpans(Governor(MACHINE), tmp_path / "missing" / "x.jsonl")


def test_peakopt_run_otlp_out_writes_spans_that_score_as_the_trace(tmp_path: Path) -> None:
    tasks = [
        {"id": "a", "duration": 0.05, "demand": {"memory_mb": 200}, "meta": {"command": "sleep 0.05"}},
        {"id": "b", "duration": 0.05, "demand": {"memory_mb": 200}, "meta": {"command": "sleep 0.05"}},
        {
            "id": "c",
            "duration": 0.0,
            "demand": {"cpu": 1},
            "depends_on": ["a", "b"],
            "meta": {"command": "true"},
        },
    ]
    path = tmp_path / "wf.json"
    machines = [{"name": "box", "capacity": {"cpu": 2, "memory_mb": 300}}]
    path.write_text(json.dumps({"machines": machines, "workflows": [{"id": "w", "tasks": tasks}]}))
    spans, trace_path = tmp_path / "spans.jsonl", tmp_path / "trace.json"
    code, _, err = run("run", str(path), "-o", str(trace_path), "--otlp-out", str(spans))
    assert code == 0, err
    assert f"wrote {spans}: 3 spans" in err
    rows = []
    for name in (trace_path, spans):
        code, out, err = run("score", str(name), "--json")
        assert code == 0, err
        rows.append(jsonl(out)[0])
    assert rows[1]["safe"] and rows[0]["safe"]
    # the export starts at its first span, the trace at the run's start (some µs before)
    assert rows[1]["makespan"] == pytest.approx(rows[0]["makespan"], abs=0.01)
    code, _, err = run("run", str(path), "--otlp-out", str(path))
    assert code == 2 and "--otlp-out" in err


def test_a_collector_that_refuses_the_spans_is_one_error_after_the_trace(tmp_path: Path, httpserver) -> None:  # type: ignore[no-untyped-def]
    httpserver.expect_request("/v1/traces", method="POST").respond_with_data("no", status=400)
    path = tmp_path / "wf.json"
    task = {"id": "a", "duration": 0.01, "demand": {"memory_mb": 10}, "meta": {"command": "true"}}
    path.write_text(
        json.dumps({"machines": [MACHINE.model_dump()], "workflows": [{"id": "w", "tasks": [task]}]})
    )
    trace_path = tmp_path / "trace.json"
    code, _, err = run("run", str(path), "-o", str(trace_path), "--otlp-out", httpserver.url_for("/"))
    assert code == 1 and err.count("Error:") == 1 and "1 of 1 spans could not be exported" in err
    assert "safe:" in err and trace_path.exists()  # the trace and the verdict come first
    governor = Governor(MACHINE)
    spans = GovernorSpans(governor, httpserver.url_for("/"))
    governor.release(governor.acquire_blocking("x", demand={}))
    spans.close()
    assert spans.failed == 1
