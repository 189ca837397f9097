"""The spans of an OpenTelemetry export (OTLP JSON), read and checked, for :mod:`peakopt.runtime.otlp`.

OTLP JSON is the protobuf messages' JSON mapping: lowerCamelCase keys, ids in hex, 64-bit
integers (the nanosecond times, ``intValue``) as strings of digits. Every span keeps its
place in the file (``resourceSpans[0].scopeSpans[0].spans[3]``), for errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peakopt.instances.documents import decode_all
from peakopt.instances.errors import InputError

#: OTLP's ``Status.code`` of an error, as a number or as its enum name.
ERROR_CODES = (2, "STATUS_CODE_ERROR")


@dataclass(frozen=True)
class OtlpSpan:
    """One span of the export, as read (times in nanoseconds since the epoch)."""

    trace_id: str
    span_id: str
    parent: str
    name: str
    start: int
    end: int
    attributes: Mapping[str, Any]
    resource: Mapping[str, Any]
    links: tuple[tuple[str, str], ...]
    failed: bool
    message: str | None
    where: str
    position: int = 0

    @property
    def label(self) -> str:
        """The span in an error: its name and where it is in the file."""
        return f"span {self.name!r} ({self.where})"


def is_otlp(data: Any) -> bool:
    """Whether a decoded JSON document is an OTLP trace export."""
    return isinstance(data, dict) and "resourceSpans" in data


def read_spans(text: str, path: str | Path) -> list[OtlpSpan]:
    """Every span of every document of an export."""
    found = decode_all(text, path)  # one document, or JSON Lines: documents one after another
    spans: list[OtlpSpan] = []
    for doc in found:
        where = f"line {doc.line}: " if len(found) > 1 else ""
        if not is_otlp(doc.data):
            raise InputError(path, where.rstrip(": "), 'is not an OTLP trace export (no "resourceSpans")')
        for r, resource_spans in enumerate(_list(doc.data, "resourceSpans", path, where)):
            resource = _attributes(_dict(resource_spans.get("resource")).get("attributes"), path, where)
            for s, scope in enumerate(
                _list(resource_spans, "scopeSpans", path, f"{where}resourceSpans[{r}]")
            ):
                base = f"{where}resourceSpans[{r}].scopeSpans[{s}]"
                for k, raw in enumerate(_list(scope, "spans", path, base)):
                    spans.append(_span(raw, resource, path, f"{base}.spans[{k}]", len(spans)))
    if not spans:
        raise InputError(path, "", "holds no span")
    return spans


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(data: Any, key: str, path: str | Path, where: str) -> list[dict[str, Any]]:
    value = _dict(data).get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise InputError(path, f"{where}.{key}".lstrip("."), "is not a list of objects")
    return value


def _value(raw: Any) -> Any:
    """An ``AnyValue``'s Python value (int64 arrive as strings in OTLP JSON); None for the others."""
    value = _dict(raw)
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "doubleValue" in value:
        return value["doubleValue"]
    return None


def _attributes(raw: Any, path: str | Path, where: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, list) or not all(
        isinstance(a, dict) and isinstance(a.get("key"), str) for a in raw
    ):
        raise InputError(path, where.rstrip(": ") or "resource", "attributes are not a list of {key, value}")
    return {a["key"]: _value(a.get("value")) for a in raw}


def _nanos(raw: dict[str, Any], key: str, path: str | Path, where: str) -> int:
    value = raw.get(key)
    found = int(value) if isinstance(value, str) and value.isdigit() else value
    if isinstance(found, int) and not isinstance(found, bool) and found > 0:
        return found
    # OTLP's 0 means unset: a span exported before it ended, or without a clock
    raise InputError(
        path, where, f"{key} is not a positive integer of nanoseconds since the epoch ({value!r})"
    )


def _span(
    raw: dict[str, Any], resource: Mapping[str, Any], path: str | Path, where: str, position: int
) -> OtlpSpan:
    name = raw.get("name")
    label = f"span {name!r} ({where})" if isinstance(name, str) else where
    for key in ("traceId", "spanId"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise InputError(path, label, f"has no {key}")
    start, end = _nanos(raw, "startTimeUnixNano", path, label), _nanos(raw, "endTimeUnixNano", path, label)
    if end < start:
        raise InputError(path, label, "ends before it starts (endTimeUnixNano < startTimeUnixNano)")
    links = tuple(
        (str(link.get("traceId")), str(link.get("spanId"))) for link in _list(raw, "links", path, label)
    )
    status = _dict(raw.get("status"))
    message = status.get("message")
    return OtlpSpan(
        trace_id=raw["traceId"],
        span_id=raw["spanId"],
        parent=str(raw.get("parentSpanId") or ""),
        name=name if isinstance(name, str) and name else raw["spanId"],
        start=start,
        end=end,
        attributes=_attributes(raw.get("attributes"), path, label),
        resource=resource,
        links=links,
        failed=status.get("code") in ERROR_CODES,
        message=message if isinstance(message, str) and message else None,
        where=where,
        position=position,
    )


def pick(spans: list[OtlpSpan], trace_id: str | None, path: str | Path) -> list[OtlpSpan]:
    """The spans of ``trace_id``, or of the export's only trace."""
    ids = list(dict.fromkeys(s.trace_id for s in spans))
    if trace_id is None:
        if len(ids) > 1:
            listed = ", ".join(f"{t} ({sum(s.trace_id == t for s in spans)} spans)" for t in ids)
            raise InputError(path, "", f"holds {len(ids)} traces: pick one with --trace-id ({listed})")
        trace_id = ids[0]
    if trace_id not in ids:
        raise InputError(path, f"trace {trace_id!r}", f"is not in the export (it holds {', '.join(ids)})")
    chosen = [s for s in spans if s.trace_id == trace_id]
    seen: dict[str, OtlpSpan] = {}
    for span in chosen:
        if span.span_id in seen:
            raise InputError(
                path, span.label, f"repeats the spanId {span.span_id} of {seen[span.span_id].label}"
            )
        seen[span.span_id] = span
    return chosen
