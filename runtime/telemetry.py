"""OpenTelemetry out: a span per call, to an OTLP/HTTP collector or an OTLP JSON file ``peakopt score`` reads.

:class:`OtlpOut` builds spans with the OpenTelemetry SDK (the ``otel`` extra: ``pip install
'peakopt[otel]'``; imported only here, when used) and exports them through a batch processor,
either to a collector (a target starting with ``http://`` or ``https://``: the OTLP/HTTP
exporter, ``/v1/traces`` appended to a bare host) or to a file, one OTLP JSON document per
line as the collector's file exporter writes them (:mod:`peakopt.runtime.otlp` reads them back).

Each call becomes one span, named for the call, with the names :mod:`peakopt.runtime.otlp`
reads: ``peakopt.step.id`` (its lease id), ``gen_ai.tool.name`` (its tool) and
``gen_ai.operation.name`` ``execute_tool``, ``peakopt.demand.<resource>`` (what it was
admitted with), ``peakopt.usage.*`` (what it was measured to use, if it was); its dependencies
as links; an error status for a call that did not end ``ok``. The span runs from the
admission to the release (the time the call held its share); the wait in the queue is its
``peakopt.wait`` attribute (seconds) and the ``peakopt.requested`` event. Every span of one
governor (or one ``peakopt run``) is in one trace, under a parent that is not exported, and the
resource says the machine (``peakopt.capacity.<resource>``, ``peakopt.machine``) and the
workflow (``peakopt.workflow.id``), so the export is scored alone: ``peakopt score FILE`` gives
the score of the governor's own :meth:`~peakopt.runtime.governor.Governor.trace`.

Times are whole microseconds after the first request (the trace's own times), on the wall
clock of that instant.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from peakopt.models import Machine, PeakoptError
from peakopt.runtime.calls import step_usage
from peakopt.runtime.leases import GovernorEvent
from peakopt.runtime.otlp import CAPACITY, DEMAND, MACHINE_NAME, OPERATION, STEP_ID, TOOL, USAGE, WORKFLOW_ID
from peakopt.runtime.trace import PLACES, Trace

if TYPE_CHECKING:
    from peakopt.runtime.governor import Governor

#: What to install for OpenTelemetry out.
EXTRA = "pip install 'peakopt[otel]'"
#: The attribute of a call's wait in the queue (seconds), and the event of its request.
WAIT = "peakopt.wait"
REQUESTED = "peakopt.requested"
MICRO = 1000  # nanoseconds
#: Seconds an OTLP/HTTP export may take, retries included.
TIMEOUT = 5.0


class TelemetryError(PeakoptError):
    """OpenTelemetry out cannot start: the SDK is not installed, or the target cannot be written."""


def require_sdk() -> None:
    """Fail now, before any work, when the OpenTelemetry SDK is missing (:class:`TelemetryError`)."""
    _sdk()


def _sdk() -> Any:
    try:
        from opentelemetry.sdk import trace as sdk_trace
    except ImportError:
        raise TelemetryError(f"OpenTelemetry out needs the OpenTelemetry SDK: {EXTRA}") from None
    return sdk_trace


def is_url(target: str | Path) -> bool:
    """Whether ``target`` is a collector's URL (else a file)."""
    return str(target).startswith(("http://", "https://"))


def traces_url(target: str) -> str:
    """The OTLP/HTTP traces endpoint of ``target``: ``/v1/traces`` appended to a bare host."""
    head, sep, path = target.partition("://")
    host, _, rest = path.partition("/")
    return target if rest.strip("/") else f"{head}{sep}{host}/v1/traces"


def _hex(value: str) -> str:
    return base64.b64decode(value).hex()


def otlp_json(request: Any) -> dict[str, Any]:
    """An ``ExportTraceServiceRequest`` as OTLP JSON (the protobuf JSON mapping, ids in hex)."""
    from google.protobuf.json_format import MessageToDict

    data: dict[str, Any] = MessageToDict(request)
    for resource_spans in data.get("resourceSpans", []):
        for scope in resource_spans.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = _hex(span[key])
                for link in span.get("links", []):
                    for key in ("traceId", "spanId"):
                        if link.get(key):
                            link[key] = _hex(link[key])
    return data


class JsonLinesExporter:
    """A span exporter writing each batch as one OTLP JSON document on a line of ``path``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.write_text("", encoding="utf-8")  # a new export replaces an old one
        except OSError as exc:
            raise TelemetryError(f"{path}: cannot be written ({exc.strerror})") from None
        self._lock = threading.Lock()

    def export(self, spans: Sequence[Any]) -> Any:
        """Append the spans as one document."""
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace.export import SpanExportResult

        line = json.dumps(otlp_json(encode_spans(spans)), separators=(",", ":"))
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Nothing to close: every batch is written when it is exported."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Every batch is on disk once exported."""
        return True


class _Counted:
    """An exporter's wrapper that counts the spans it failed to export."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.failed = 0

    def export(self, spans: Sequence[Any]) -> Any:
        """Export through the wrapped exporter, counting a failure."""
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result = self.inner.export(spans)
        except Exception:  # an exporter's bug must not end the governed calls
            result = SpanExportResult.FAILURE
        if result != SpanExportResult.SUCCESS:
            self.failed += len(spans)
        return result

    def shutdown(self) -> None:
        """Shut the wrapped exporter down."""
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Flush the wrapped exporter."""
        return bool(self.inner.force_flush(timeout_millis))


class OtlpOut:
    """Spans of calls, exported as they end (see the module docstring); :meth:`close` flushes them.

    Parameters
    ----------
    target
        A collector's URL (``http://host:4318``) or a file (OTLP JSON Lines).
    machine, workflow_id
        What the resource says: the capacities the calls ran under, the workflow's id.
    service
        The resource's ``service.name``.
    exporter
        A span exporter to use instead (tests, a custom one).
    """

    def __init__(
        self,
        target: str | Path,
        *,
        machine: Machine,
        workflow_id: str,
        service: str = "peakopt",
        exporter: Any = None,
    ) -> None:
        sdk = _sdk()
        from opentelemetry import trace as api
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        attributes: dict[str, Any] = {
            "service.name": service,
            MACHINE_NAME: machine.name,
            WORKFLOW_ID: workflow_id,
        }
        attributes.update({f"{CAPACITY}{r}": float(c) for r, c in machine.capacity.items()})
        self.provider = sdk.TracerProvider(resource=Resource.create(attributes))
        self.target = str(target)
        self.exporter = _Counted(exporter if exporter is not None else self._exporter(target))
        # duck-typed: the SDK calls export, shutdown and force_flush only
        self.provider.add_span_processor(BatchSpanProcessor(cast(Any, self.exporter)))
        self.tracer = self.provider.get_tracer("peakopt.runtime")
        ids = sdk.RandomIdGenerator()
        root = api.SpanContext(
            trace_id=ids.generate_trace_id(),
            span_id=ids.generate_span_id(),
            is_remote=True,
            trace_flags=api.TraceFlags(api.TraceFlags.SAMPLED),
        )
        self._parent = api.set_span_in_context(api.NonRecordingSpan(root))
        self._contexts: dict[str, Any] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _exporter(target: str | Path) -> Any:
        if not is_url(target):
            return JsonLinesExporter(target)
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise TelemetryError(f"OTLP/HTTP out needs the OTLP exporter: {EXTRA}") from None
        return OTLPSpanExporter(endpoint=traces_url(str(target)), timeout=TIMEOUT)

    def span(
        self,
        step: str,
        *,
        name: str,
        start_ns: int,
        end_ns: int,
        tool: str | None = None,
        demand: Mapping[str, float] | None = None,
        usage: Mapping[str, float] | None = None,
        depends_on: Sequence[str] = (),
        wait: float | None = None,
        error: str | None = None,
    ) -> None:
        """Emit one call's span (``depends_on``: ids of spans emitted before)."""
        from opentelemetry import trace as api
        from opentelemetry.trace import Link, Status, StatusCode

        attributes: dict[str, Any] = {STEP_ID: step, OPERATION: "execute_tool"}
        if tool is not None:
            attributes[TOOL] = tool
        attributes.update({f"{DEMAND}{r}": float(a) for r, a in (demand or {}).items()})
        attributes.update({f"{USAGE}{k}": float(v) for k, v in (usage or {}).items()})
        if wait is not None:
            attributes[WAIT] = round(wait, PLACES)
        with self._lock:
            links = [Link(self._contexts[d]) for d in depends_on if d in self._contexts]
            span = self.tracer.start_span(
                name,
                context=self._parent,
                kind=api.SpanKind.INTERNAL,
                attributes=attributes,
                links=links,
                start_time=start_ns,
            )
            if wait is not None:
                span.add_event(REQUESTED, {WAIT: round(wait, PLACES)}, timestamp=start_ns - round(wait * 1e9))
            if error is not None:
                span.set_status(Status(StatusCode.ERROR, error))
            span.end(end_time=end_ns)
            self._contexts[step] = span.get_span_context()

    @property
    def failed(self) -> int:
        """How many spans could not be exported (a collector down, a file that went away)."""
        return self.exporter.failed

    def close(self) -> None:
        """Export every span still queued and stop."""
        self.provider.force_flush()
        self.provider.shutdown()


def _micros(seconds: float) -> int:
    """Seconds as whole microseconds (the trace's rounding), for exact times after a round trip."""
    return round(round(seconds, PLACES) * 1_000_000)


def export_trace(trace: Trace, target: str | Path, *, service: str = "peakopt", exporter: Any = None) -> int:
    """Write a finished run's trace (``peakopt run --otlp-out``) as spans; how many.

    Steps that never started have no span.

    Raises
    ------
    TelemetryError
        When some spans could not be exported (the SDK's own retry messages are kept quiet).
    """
    from datetime import datetime

    base = _micros(datetime.fromisoformat(trace.started_at).timestamp()) * MICRO
    out = OtlpOut(
        target, machine=trace.machine, workflow_id=trace.workflow.id, service=service, exporter=exporter
    )
    tasks = trace.workflow.index
    count = 0
    for step in sorted(trace.ran, key=lambda s: (s.end or 0.0, s.start or 0.0)):  # as they ended
        task = trace.workflow.tasks[tasks[step.id]]
        usage = step.usage.model_dump() if step.usage is not None else None
        out.span(
            step.id,
            name=step.id,
            start_ns=base + _micros(step.start or 0.0) * MICRO,
            end_ns=base + _micros(step.end or 0.0) * MICRO,
            tool=task.tool,
            demand={r: task.peak(r) for s in task.segments for r in s.demand},
            usage=usage,
            depends_on=task.depends_on,
            error=None if step.status == "ok" else (step.error or "failed"),
        )
        count += 1
    sdk_log = logging.getLogger("opentelemetry")
    level, sdk_log.level = sdk_log.level, logging.CRITICAL  # one error below, not a retry log
    try:
        out.close()
    finally:
        sdk_log.setLevel(level)
    if out.failed:
        raise TelemetryError(f"{target}: {out.failed} of {count} spans could not be exported")
    return count


class GovernorSpans:
    """A governor's subscriber emitting one span per call as it is released (see the module docstring).

    Parameters
    ----------
    governor
        The calls to follow (from now on).
    target, service, exporter
        As :class:`OtlpOut`'s.
    """

    def __init__(
        self, governor: Governor, target: str | Path, *, service: str = "peakopt", exporter: Any = None
    ) -> None:
        self.out = OtlpOut(
            target, machine=governor.machine, workflow_id=governor.name, service=service, exporter=exporter
        )
        self.governor = governor
        # the governor's clock against the wall clock, once: spans are on the wall clock
        self._offset_ns = time.time_ns() - round(governor.clock() * 1e9)
        self.unsubscribe = governor.subscribe(self)

    def __call__(self, event: GovernorEvent) -> None:
        """Emit the span of a released call."""
        lease = event.lease
        first = self.governor.started
        if event.kind != "released" or lease.admitted_at is None or first is None:
            return
        base = (round(first * 1e9) + self._offset_ns) // MICRO * MICRO
        used = step_usage(event.usage, lease.demand)
        self.out.span(
            lease.id,
            name=lease.name,
            start_ns=base + _micros(lease.admitted_at - first) * MICRO,
            end_ns=base + _micros(event.time - first) * MICRO,
            tool=lease.tool,
            demand=lease.demand,
            usage=used.model_dump() if used is not None else None,
            depends_on=lease.depends_on,
            wait=lease.wait,
            error=None if event.outcome == "ok" else (event.error or event.outcome),
        )

    @property
    def failed(self) -> int:
        """How many spans could not be exported so far."""
        return self.out.failed

    def close(self) -> None:
        """Stop following the governor and export every span still queued."""
        self.unsubscribe()
        self.out.close()
