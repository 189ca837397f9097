"""Hand-written OTLP JSON exports for the OpenTelemetry importer's tests, and runs written as OTLP."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from strategies import machines, workflows

from peakopt.models import Machine, Workflow

TRACE = "5b8efff798038103d269b633813fc60c"
EPOCH = 1_764_612_000 * 10**9  # 2025-12-01T18:00:00Z, in nanoseconds


def value(v: object) -> dict[str, object]:
    """An OTLP AnyValue: int64 as a string, as the JSON mapping writes them."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": str(v)}


def attrs(values: dict[str, object]) -> list[dict[str, object]]:
    return [{"key": k, "value": value(v)} for k, v in values.items()]


def span(
    sid: str,
    name: str,
    start: float,
    end: float,
    *,
    parent: str = "",
    links: Iterable[str] = (),
    trace: str = TRACE,
    error: bool = False,
    attributes: dict[str, object] | None = None,
) -> dict[str, Any]:
    """A span from ``start`` to ``end`` seconds after :data:`EPOCH`."""
    found: dict[str, Any] = {
        "traceId": trace,
        "spanId": sid,
        "parentSpanId": parent,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(EPOCH + round(start * 10**9)),
        "endTimeUnixNano": str(EPOCH + round(end * 10**9)),
        "attributes": attrs(attributes or {}),
        "links": [{"traceId": trace, "spanId": link} for link in links],
        "status": {"code": 2, "message": "boom"} if error else {},
    }
    return found


def demand(cpu: float | str, memory: float | str) -> dict[str, object]:
    """The demand attributes of a tool span (a string, for the importer's tests of a bad one)."""
    return {"peakopt.demand.cpu": cpu, "peakopt.demand.memory_mb": memory}


def export(
    spans: list[dict[str, Any]], capacity: Mapping[str, float] | None = None, **resource: object
) -> dict[str, Any]:
    found = {"service.name": "agent", **resource}
    found.update({f"peakopt.capacity.{r}": v for r, v in (capacity or {}).items()})
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": attrs(found)},
                "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}],
            }
        ]
    }


def tool(
    sid: str, name: str, start: float, end: float, cpu: float | str, memory: float | str, **options: Any
) -> dict[str, Any]:
    found = span(sid, name, start, end, **options)
    found["attributes"] += attrs({"gen_ai.tool.name": name, **demand(cpu, memory)})
    return found


def write(tmp_path: Path, data: object, name: str = "export.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


BOX = {"cpu": 4, "memory_mb": 1000}


def agent(tmp_path: Path) -> Path:
    """An agent run (a container) with three tool calls: two in parallel, the third linked to both."""
    spans = [
        span("r", "invoke_agent", 0.0, 3.0, attributes={"gen_ai.operation.name": "invoke_agent"}),
        tool("a", "search", 0.0, 1.0, 1, 600, parent="r"),
        tool("b", "fetch", 0.0, 2.0, 1, 300, parent="r"),
        tool("c", "answer", 2.0, 3.0, 2, 100, parent="r", links=["a", "b"]),
    ]
    return write(tmp_path, export(spans, BOX, **{"peakopt.machine": "box"}))


@st.composite
def runs(draw: st.DrawFn) -> tuple[Workflow, Machine, dict[str, int]]:
    """A workflow (whole seconds, whole demands), a machine, and dependency-valid integer starts."""
    workflow = draw(workflows(max_tasks=7, integer=True, piecewise=False))
    starts: dict[str, int] = {}
    pending = list(workflow.tasks)
    while pending:  # each task once its predecessors have starts: a valid schedule, some waits
        task = next(t for t in pending if all(p in starts for p in t.depends_on))
        ready = max((starts[p] + int(workflow.task(p).length) for p in task.depends_on), default=0)
        starts[task.id] = ready + draw(st.integers(0, 3))
        pending.remove(task)
    return workflow, draw(machines(integer=True)), starts


def as_otlp(workflow: Workflow, machine: Machine, starts: dict[str, int], container: bool) -> dict[str, Any]:
    """The run as an OTLP export: a span per step, a link per dependency (or the parent, for an only one)."""
    index = {t.id: f"{k + 1:016x}" for k, t in enumerate(workflow.tasks)}
    end = {t.id: starts[t.id] + int(t.length) for t in workflow.tasks}
    spans = []
    rank = {step: k for k, step in enumerate(starts)}  # the order starts were given in: topological
    for task in sorted(workflow.tasks, key=lambda t: (end[t.id], starts[t.id], rank[t.id])):  # as they end
        (only,) = task.depends_on if len(task.depends_on) == 1 else ("",)
        as_parent = bool(only) and end[task.id] > end[only]  # an empty span at its parent's end is contained
        found = span(
            index[task.id],
            task.id,
            starts[task.id],
            end[task.id],
            parent=index[only] if as_parent else ("root" if container else ""),
            links=[index[p] for p in task.depends_on if not (as_parent and p == only)],
        )
        found["attributes"] += attrs({f"peakopt.demand.{r}": int(a) for r, a in (task.demand or {}).items()})
        spans.append(found)
    if container:
        first, last = min(starts.values()), max(end.values())
        spans.append(span("root", "agent", first, last))
    return export(
        spans, dict(machine.capacity), **{"peakopt.machine": machine.name, "peakopt.workflow.id": workflow.id}
    )
