"""The spans of an OpenTelemetry export (OTLP JSON), read and checked, for :mod:`peakopt.runtime.otlp`.

OTLP JSON is the protobuf messages' JSON mapping: lowerCamelCase keys, ids in hex, 64-bit
integers (the nanosecond times, ``intValue``) as strings of digits. Every span keeps its
place in the file (``resourceSpans[0].scopeSpans[0].spans[3]``), for errors.
"""

from __future__ import annotations

import re
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
        return f"span {self.name!r} (spanId {self.span_id}, {self.where})"


def is_otlp(data: Any) -> bool:
    """Whether a decoded JSON document is an OTLP trace export."""
    return isinstance(data, dict) and "resourceSpans" in data


def read_spans(text: str, path: str | Path) -> list[OtlpSpan]:
    """Every span of every document of an export.

    Raises
    ------
    InputError
        Naming the place (or the span) and the rule: a part of the wrong type, a span without
        ids, with a time that is not one (see :data:`TIME_RULE`) or ending before it starts.
    """
    found = decode_all(text, path)  # one document, or JSON Lines: documents one after another
    spans: list[OtlpSpan] = []
    for doc in found:
        where = f"line {doc.line}: " if len(found) > 1 else ""
        if not is_otlp(doc.data):
            raise InputError(path, where.rstrip(": "), 'is not an OTLP trace export (no "resourceSpans")')
        for r, resource_spans in enumerate(_list(doc.data, "resourceSpans", path, where)):
            place = f"{where}resourceSpans[{r}]"
            resource = _attributes(
                _object(resource_spans, "resource", path, place), path, f"{place}.resource"
            )
            for s, scope in enumerate(_list(resource_spans, "scopeSpans", path, place)):
                base = f"{place}.scopeSpans[{s}]"
                for k, raw in enumerate(_list(scope, "spans", path, base)):
                    spans.append(_span(raw, resource, path, f"{base}.spans[{k}]", len(spans)))
    if not spans:
        raise InputError(path, "", "holds no span")
    return spans


def _object(data: dict[str, Any], key: str, path: str | Path, where: str) -> dict[str, Any]:
    """``data[key]``, an object (absent or null: empty)."""
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(path, f"{where}.{key}", f"is not an object ({_shown(value)})")
    return value


def _list(data: dict[str, Any], key: str, path: str | Path, where: str) -> list[dict[str, Any]]:
    """``data[key]``, a list of objects (absent or null: empty), the place named in the error."""
    value = data.get(key)
    value = [] if value is None else value  # proto3 JSON: null is the field's default
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        # a document's own key has no dot before it: "resourceSpans", "line 2: resourceSpans"
        item = f"{where}{key}" if not where or where.endswith(": ") else f"{where}.{key}"
        raise InputError(path, item, "is not a list of objects")
    return value


def _shown(value: Any) -> str:
    """A value in an error, cut short (a time of 5,000 digits is not printed whole)."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


#: A 64-bit integer as OTLP JSON writes it: a string of ASCII digits (``str.isdigit`` takes "²").
_DIGITS = re.compile(r"-?[0-9]{1,20}", re.ASCII)
#: The times a span may have, in nanoseconds since the epoch: OTLP's 0 means unset (a span
#: exported before it ended), and past int64 (2262-04-11) no clock of a real run goes.
LATEST = 2**63 - 1
TIME_RULE = (
    "is not a time: a whole number of nanoseconds since the epoch from 1 to 2^63-1 "
    "(1970 to 2262), as a JSON integer or a string of ASCII digits"
)


def whole(value: Any) -> int | None:
    """An OTLP 64-bit integer (a JSON integer, or a string of ASCII digits), or None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        return int(value)
    return None


def _value(raw: Any) -> Any:
    """An ``AnyValue``'s Python value (int64 arrive as strings in OTLP JSON); None for the others."""
    value = raw if isinstance(raw, dict) else {}
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "intValue" in value:
        number = whole(value["intValue"])
        return value["intValue"] if number is None else number
    if "doubleValue" in value:
        return value["doubleValue"]
    return None


def _attributes(data: dict[str, Any], path: str | Path, where: str) -> dict[str, Any]:
    raw = data.get("attributes")
    if raw is None:
        return {}
    if not isinstance(raw, list) or not all(
        isinstance(a, dict) and isinstance(a.get("key"), str) for a in raw
    ):
        raise InputError(path, where, "attributes are not a list of {key, value}")
    return {a["key"]: _value(a.get("value")) for a in raw}


def _nanos(raw: dict[str, Any], key: str, path: str | Path, where: str) -> int:
    value = raw.get(key)
    found = whole(value)
    if found is None or not 1 <= found <= LATEST:
        raise InputError(path, where, f"{key} {TIME_RULE} ({_shown(value)})")
    return found


def _label(raw: dict[str, Any], where: str) -> str:
    """The span in an error before it is read: its name and id when it has them, and its place."""
    name, sid = raw.get("name"), raw.get("spanId")
    at = f"spanId {sid}, {where}" if isinstance(sid, str) and sid else where
    return f"span {name!r} ({at})" if isinstance(name, str) and name else f"span ({at})"


def _ids(raw: dict[str, Any], path: str | Path, label: str) -> tuple[str, str, str]:
    """The span's trace id, span id and parent's id (empty: a root)."""
    for key in ("traceId", "spanId"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise InputError(path, label, f"has no {key}")
    parent = raw.get("parentSpanId")
    if parent is not None and not isinstance(parent, str):
        raise InputError(path, label, f"parentSpanId is not a string ({_shown(parent)})")
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        raise InputError(path, label, f"name is not a string ({_shown(name)})")
    return raw["traceId"], raw["spanId"], parent or ""


def _links(raw: dict[str, Any], path: str | Path, label: str) -> tuple[tuple[str, str], ...]:
    links = [] if raw.get("links") is None else raw["links"]  # null: none
    if not isinstance(links, list) or not all(isinstance(link, dict) for link in links):
        raise InputError(path, label, "links is not a list of objects")
    for k, link in enumerate(links):
        for key in ("traceId", "spanId"):
            if not isinstance(link.get(key), str) or not link[key]:
                raise InputError(path, label, f"link {k} has no {key} (a string)")
    return tuple((link["traceId"], link["spanId"]) for link in links)


def _status(raw: dict[str, Any], path: str | Path, label: str) -> tuple[bool, str | None]:
    """Whether the span failed, and its status message."""
    status = raw.get("status")
    if status is None:
        return False, None
    if not isinstance(status, dict):
        raise InputError(path, label, f"status is not an object ({_shown(status)})")
    code, message = status.get("code"), status.get("message")
    if code is not None and (isinstance(code, bool) or not isinstance(code, int | str)):
        raise InputError(path, label, f"status code is not a number or a name ({_shown(code)})")
    if message is not None and not isinstance(message, str):
        raise InputError(path, label, f"status message is not a string ({_shown(message)})")
    return code in ERROR_CODES, message or None


def _span(
    raw: dict[str, Any], resource: Mapping[str, Any], path: str | Path, where: str, position: int
) -> OtlpSpan:
    label = _label(raw, where)
    trace_id, span_id, parent = _ids(raw, path, label)
    start, end = _nanos(raw, "startTimeUnixNano", path, label), _nanos(raw, "endTimeUnixNano", path, label)
    if end < start:
        raise InputError(path, label, "ends before it starts (endTimeUnixNano < startTimeUnixNano)")
    failed, message = _status(raw, path, label)
    return OtlpSpan(
        trace_id=trace_id,
        span_id=span_id,
        parent=parent,
        name=raw.get("name") or span_id,
        start=start,
        end=end,
        attributes=_attributes(raw, path, label),
        resource=resource,
        links=_links(raw, path, label),
        failed=failed,
        message=message,
        where=where,
        position=position,
    )


def pick(spans: list[OtlpSpan], trace_id: str | None, path: str | Path) -> list[OtlpSpan]:
    """The spans of ``trace_id``, or of the export's only trace.

    Their graph is checked when they are read as a trace
    (:func:`peakopt.runtime.span_graph.check_graph`).
    """
    ids = list(dict.fromkeys(s.trace_id for s in spans))
    if trace_id is None:
        if len(ids) > 1:
            listed = ", ".join(f"{t} ({sum(s.trace_id == t for s in spans)} spans)" for t in ids)
            raise InputError(path, "", f"holds {len(ids)} traces: pick one with --trace-id ({listed})")
        trace_id = ids[0]
    if trace_id not in ids:
        raise InputError(path, f"trace {trace_id!r}", f"is not in the export (it holds {', '.join(ids)})")
    return [s for s in spans if s.trace_id == trace_id]
