"""OpenTelemetry span exports (OTLP JSON) read as peakopt traces: the spans of one trace as steps.

The file is what the OpenTelemetry collector's file exporter (or any ``otlp-json`` writer)
writes: one or more ``{"resourceSpans": [{"resource": {"attributes": [...]}, "scopeSpans":
[{"spans": [...]}]}]}`` documents (JSON Lines, or one document), each span with ``traceId``,
``spanId``, ``parentSpanId``, ``name``, ``startTimeUnixNano`` and ``endTimeUnixNano`` (strings
of ASCII digits, or JSON integers, from 1 to 2^63-1), ``attributes`` (``[{"key", "value":
{"stringValue" | "intValue" | "doubleValue" | "boolValue": ...}}]``), ``links``
(``[{"traceId", "spanId"}]``) and ``status`` (``{"code": 2}`` or ``"STATUS_CODE_ERROR"`` is
an error). The spans of a trace must form a tree, each span once
(:mod:`peakopt.runtime.span_graph`).

How spans become a workflow (see ``docs/formats.md``, "OpenTelemetry traces"):

- **Containers and steps.** A span with a child that starts before it ends (or an empty child
  at its end) — an agent run, a workflow span, a tool call that makes HTTP calls — *contains*
  that child: it is a container, not a step — its time is its children's, and counting both
  would count the work twice. A span with no such child is a step. A child that starts at or
  after its parent's end was *caused* by the parent (a queued job, a follow-up), and depends on it.
- **Dependencies.** A span depends on its parent when it starts at or after the parent's end,
  and on every span it links to. A dependency on a container is one on each of its steps, and a
  container's dependencies are each of its steps'. Only the dependencies the run kept become
  edges (the predecessor had ended when the successor started): a link to a span that was still
  running says "related", not "after", and the run is the fact. The edges dropped are counted
  in the workflow's ``meta.otlp.dropped_links``. Among empty spans at one instant, the one earlier
  in the file comes first (exporters write spans as they end).
- **Ids, tools, demands.** A step's id is its ``peakopt.step.id`` attribute, else its span name
  (``name#2``, ``name#3``... for repeats, in start order); its tool is ``gen_ai.tool.name``
  (the GenAI semantic conventions' tool-execution span); its demands are the
  ``peakopt.demand.<resource>`` attributes (numbers) — none, no demand. Measured usage, for
  ``--demand measured``: ``peakopt.usage.cpu_avg``, ``peakopt.usage.cpu_peak`` and
  ``peakopt.usage.memory_peak_mb``. A step whose status is an error failed.
- **Times.** Starts are seconds since the first step's start (to 1 µs, as a controller trace's).
- **The machine.** The resource attributes ``peakopt.capacity.<resource>`` (and
  ``peakopt.machine``, its name), unless one is given; the workflow's id is the
  ``peakopt.workflow.id`` attribute (of the resource or a span), else the name of the trace's
  only root span, else ``trace-`` and the trace id's first 8 characters.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from peakopt.instances.errors import InputError, from_validation
from peakopt.instances.paths import read_text
from peakopt.models import Machine, Workflow
from peakopt.runtime.span_graph import check_graph
from peakopt.runtime.spans import OtlpSpan, pick, read_spans
from peakopt.runtime.trace import PLACES, StepRecord, StepUsage, Trace

STEP_ID = "peakopt.step.id"
WORKFLOW_ID = "peakopt.workflow.id"
MACHINE_NAME = "peakopt.machine"
DEMAND = "peakopt.demand."
CAPACITY = "peakopt.capacity."
USAGE = "peakopt.usage."
TOOL = "gen_ai.tool.name"
OPERATION = "gen_ai.operation.name"
NANO = 10**9


def load_otlp(path: str | Path, *, machine: Machine | None = None, trace_id: str | None = None) -> Trace:
    """Read one trace of an OTLP JSON export as a :class:`~peakopt.runtime.trace.Trace`.

    Parameters
    ----------
    path
        The export (one document, or JSON Lines of documents as the collector writes them).
    machine
        The machine the run is judged on; None: the export's ``peakopt.capacity.*`` attributes.
    trace_id
        The trace to read, when the export holds several.

    Raises
    ------
    InputError
        Naming the file, the span and the rule: not OTLP, a span without ids or with bad times
        or a non-numeric demand, several traces and no ``trace_id`` (they are listed), no machine.
    """
    spans = read_spans(read_text(Path(path)), path)
    return to_trace(pick(spans, trace_id, path), path, machine)


@dataclass
class _Graph:
    """Containers, steps and the dependencies between spans (see the module docstring)."""

    spans: list[OtlpSpan]
    by_id: dict[str, OtlpSpan] = field(init=False)
    inside: dict[str, list[OtlpSpan]] = field(init=False)
    after: list[tuple[OtlpSpan, OtlpSpan]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {s.span_id: s for s in self.spans}
        self.inside = defaultdict(list)
        self.after = []
        for span in self.spans:
            parent = self.by_id.get(span.parent)
            if parent is None:
                continue
            if span.start < parent.end or span.end <= parent.end:  # an empty span at its end too
                self.inside[parent.span_id].append(span)
            else:
                self.after.append((parent, span))
        for span in self.spans:
            for linked_trace, linked in span.links:
                if linked_trace == span.trace_id and linked in self.by_id and linked != span.span_id:
                    self.after.append((self.by_id[linked], span))

    def steps_of(self, span: OtlpSpan) -> Iterator[OtlpSpan]:
        """The steps a span stands for: itself, or (a container) its contained spans' steps."""
        stack = [span]  # an explicit stack: a trace nested deeper than Python's recursion limit reads
        while stack:
            here = stack.pop()
            inside = self.inside.get(here.span_id)
            if inside:
                stack.extend(reversed(inside))  # children in file order
            else:
                yield here

    @property
    def steps(self) -> list[OtlpSpan]:
        """Every step, in start order."""
        return sorted((s for s in self.spans if not self.inside.get(s.span_id)), key=_order)

    def edges(self) -> tuple[set[tuple[str, str]], int]:
        """(predecessor, successor) span ids of the dependencies the run kept, and how many it did not."""
        kept: set[tuple[str, str]] = set()
        dropped: set[tuple[str, str]] = set()
        for before, later in self.after:
            for a in self.steps_of(before):
                for b in self.steps_of(later):
                    if a.span_id == b.span_id:
                        continue
                    # strictly earlier in start order too: two empty spans at one instant make no cycle
                    held = a.end <= b.start and _order(a) < _order(b)
                    (kept if held else dropped).add((a.span_id, b.span_id))
        return kept, len(dropped - kept)


def _order(span: OtlpSpan) -> tuple[int, int, int]:
    # empty spans at one instant: the earlier in the file first (exporters write spans as they end)
    return (span.start, span.end, span.position)


def _ids(steps: Iterable[OtlpSpan], path: str | Path) -> dict[str, str]:
    """Each step's id: its ``peakopt.step.id``, else its name (repeats numbered in start order)."""
    ids: dict[str, str] = {}
    named: dict[str, OtlpSpan] = {}
    for span in steps:
        if STEP_ID in span.attributes:
            step = str(span.attributes[STEP_ID])
            if step in named:
                rule = f"has {STEP_ID} {step!r}, as {named[step].label} does: a duplicate step id"
                raise InputError(path, span.label, rule)
            named[step] = span
    taken = {str(s.attributes[STEP_ID]) for s in steps if STEP_ID in s.attributes}
    counts: dict[str, int] = defaultdict(int)
    for span in steps:
        if STEP_ID in span.attributes:
            ids[span.span_id] = str(span.attributes[STEP_ID])
            continue
        counts[span.name] += 1
        name = span.name if counts[span.name] == 1 else f"{span.name}#{counts[span.name]}"
        while name in taken:
            counts[span.name] += 1
            name = f"{span.name}#{counts[span.name]}"
        taken.add(name)
        ids[span.span_id] = name
    return ids


def _numbers(span: OtlpSpan, prefix: str, path: str | Path) -> dict[str, float]:
    found = {}
    for key, value in span.attributes.items():
        if key.startswith(prefix):
            if not _finite(value):
                raise InputError(path, span.label, f"attribute {key} is not a finite number ({value!r})")
            found[key.removeprefix(prefix)] = float(value)
    return found


def _finite(value: object) -> bool:
    """A finite JSON number (an integer of 400 digits is not one: no float holds it)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _usage(span: OtlpSpan, path: str | Path) -> StepUsage | None:
    used = _numbers(span, USAGE, path)
    if not used:
        return None
    if not {"cpu_avg", "memory_peak_mb"} <= used.keys():
        rule = f"has {USAGE}* attributes but not both {USAGE}cpu_avg and {USAGE}memory_peak_mb"
        raise InputError(path, span.label, rule)
    try:
        return StepUsage(
            cpu_avg=used["cpu_avg"],
            cpu_peak=used.get("cpu_peak", used["cpu_avg"]),
            memory_peak_mb=used["memory_peak_mb"],
        )
    except ValidationError as exc:
        raise InputError(path, span.label, f"{USAGE}* {exc.errors()[0]['msg']}") from None


def _machine(spans: list[OtlpSpan], path: str | Path) -> Machine:
    for span in spans:
        capacity = {k.removeprefix(CAPACITY): v for k, v in span.resource.items() if k.startswith(CAPACITY)}
        if capacity:
            data = {"name": str(span.resource.get(MACHINE_NAME, "otlp")), "capacity": capacity}
            try:
                return Machine.model_validate(data)
            except ValidationError as exc:
                raise from_validation(path, exc, data, "resource attributes") from None
    rule = f"names no machine (no {CAPACITY}<resource> resource attributes): give one with --machine"
    raise InputError(path, "", rule)


def _workflow_id(graph: _Graph) -> str:
    for span in graph.spans:
        for attributes in (span.resource, span.attributes):
            if WORKFLOW_ID in attributes:
                return str(attributes[WORKFLOW_ID])
    roots = [s for s in graph.spans if s.parent not in graph.by_id]
    return roots[0].name if len(roots) == 1 else f"trace-{graph.spans[0].trace_id[:8]}"


def to_trace(spans: list[OtlpSpan], path: str | Path, machine: Machine | None = None) -> Trace:
    """The trace of one OTLP trace's spans (see the module docstring).

    Raises
    ------
    InputError
        When the spans do not form a graph peakopt can read
        (:func:`~peakopt.runtime.span_graph.check_graph`), or a value they give is not one
        (naming the span).
    """
    check_graph(spans, path)  # before anything is built: the walks below assume a forest
    graph = _Graph(spans)
    steps = graph.steps
    ids = _ids(steps, path)
    workflow = _workflow(graph, steps, ids, path)
    zero = steps[0].start
    records = tuple(
        StepRecord(
            id=ids[s.span_id],
            status="failed" if s.failed else "ok",
            start=_seconds(s.start - zero),
            end=_seconds(s.end - zero),
            usage=_usage(s, path),
            error=s.message if s.failed else None,
        )
        for s in steps
    )
    service = next((str(s.resource["service.name"]) for s in spans if "service.name" in s.resource), None)
    return Trace(
        workflow=workflow,
        machine=machine or _machine(spans, path),
        policy=f"otlp:{service}" if service else "otlp",
        started_at=datetime.fromtimestamp(zero / NANO, UTC).isoformat(),
        status="failed" if any(s.failed for s in steps) else "ok",
        steps=records,
    )


def _task(span: OtlpSpan, step: str, preds: list[str], path: str | Path) -> dict[str, Any]:
    """The task of a step span, as data."""
    meta = {"span_id": span.span_id, **({"span": span.name} if span.name != step else {})}
    if OPERATION in span.attributes:
        meta["operation"] = str(span.attributes[OPERATION])
    task: dict[str, Any] = {
        "id": step,
        "duration": _seconds(span.end - span.start),
        "demand": _numbers(span, DEMAND, path),
        "depends_on": preds,
        "meta": meta,
    }
    if TOOL in span.attributes:
        task["tool"] = str(span.attributes[TOOL])
    return task


def _workflow(graph: _Graph, steps: list[OtlpSpan], ids: dict[str, str], path: str | Path) -> Workflow:
    """The workflow of the steps and the dependencies the run kept."""
    kept, dropped = graph.edges()
    preds: dict[str, list[str]] = defaultdict(list)
    for a, b in sorted(kept, key=lambda e: (_order(graph.by_id[e[0]]), e[1])):
        preds[b].append(ids[a])
    otlp = {
        "trace_id": steps[0].trace_id,
        "containers": len(graph.spans) - len(steps),
        "dropped_links": dropped,
    }
    data = {
        "id": _workflow_id(graph),
        "tasks": [_task(s, ids[s.span_id], preds[s.span_id], path) for s in steps],
        "meta": {"otlp": otlp},
    }
    try:
        return Workflow.model_validate(data)
    except ValidationError as exc:
        loc = tuple(exc.errors()[0]["loc"])
        at = loc[1] if len(loc) > 1 and loc[0] == "tasks" else None
        # a task's value (its id, a demand) came from a span: name the span, then the task
        span = steps[at].label if isinstance(at, int) and at < len(steps) else ""
        raise from_validation(path, exc, data, span) from None


def _seconds(nanos: int) -> float:
    # a correctly rounded division, then the trace's 1 µs
    return round(nanos / NANO, PLACES)
