"""The span graph of one OTLP trace, checked before anything is built from it.

A trace's spans must form a forest under ``parentSpanId``: no span its own ancestor, each span
id once (a span whose parent is not in the export is a root: a remote parent, such as the
agent's span in another service, is common in real exports). Its links (to spans of the same
trace) must point at spans that are there, never at the span itself, and never close a cycle
with the parent edges (a span caused by its own descendants). :func:`check_graph` says which
rule is broken, naming the span; the walks are iterative, so a trace of any depth is checked
without recursion.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from peakopt.instances.errors import InputError
from peakopt.runtime.spans import OtlpSpan


def check_graph(spans: list[OtlpSpan], path: str | Path) -> None:
    """Refuse a trace's spans that do not form a graph peakopt can read (see the module docstring).

    Parameters
    ----------
    spans
        The spans of one trace, in file order.
    path
        The file, for errors.

    Raises
    ------
    InputError
        Naming the span and the rule: a duplicate span id, a parent cycle,
        a link to itself or to a span not in the export, a cycle of links and parents.
    """
    by_id = _unique(spans, path)
    for span in spans:
        if span.parent == span.span_id:
            raise InputError(path, span.label, "is its own parent (its parentSpanId is its spanId)")
        for trace_id, linked in span.links:
            if trace_id == span.trace_id and linked == span.span_id:
                raise InputError(path, span.label, "links to itself")
            if trace_id == span.trace_id and linked not in by_id:
                rule = f"links to span {linked} of its trace, which is not in the export"
                raise InputError(path, span.label, rule)
    _no_parent_cycle(spans, by_id, path)
    _no_cycle(spans, by_id, path)


def _unique(spans: list[OtlpSpan], path: str | Path) -> dict[str, OtlpSpan]:
    seen: dict[str, OtlpSpan] = {}
    for span in spans:
        if span.span_id in seen:
            rule = (
                f"repeats the spanId {span.span_id} of {seen[span.span_id].label}: "
                "a duplicate span id (each span's id is its own)"
            )
            raise InputError(path, span.label, rule)
        seen[span.span_id] = span
    return seen


def _chain(cycle: list[OtlpSpan]) -> str:
    """A cycle in words, from its span earliest in the file back to it."""
    first = min(range(len(cycle)), key=lambda k: cycle[k].position)
    turned = cycle[first:] + cycle[:first]
    return " -> ".join(f"{s.name!r} ({s.span_id})" for s in [*turned, turned[0]])


def _first(cycle: list[OtlpSpan]) -> OtlpSpan:
    return min(cycle, key=lambda s: s.position)


def _no_parent_cycle(spans: list[OtlpSpan], by_id: dict[str, OtlpSpan], path: str | Path) -> None:
    """Walk up from every span (each has one parent): a walk that meets itself is a cycle."""
    done: set[str] = set()
    for span in spans:
        walk: list[OtlpSpan] = []
        on_walk: dict[str, int] = {}
        here: OtlpSpan | None = span
        while here is not None and here.span_id not in done:
            if here.span_id in on_walk:
                cycle = walk[on_walk[here.span_id] :]
                rule = f"its parents form a cycle: {_chain(cycle)} (a span cannot be its own ancestor)"
                raise InputError(path, _first(cycle).label, rule)
            on_walk[here.span_id] = len(walk)
            walk.append(here)
            here = by_id.get(here.parent)
        done.update(on_walk)


def _edges(spans: Iterable[OtlpSpan], by_id: dict[str, OtlpSpan]) -> dict[str, list[str]]:
    """Span id -> the spans that come after it: its children, and the spans that link to it."""
    after: dict[str, list[str]] = {span_id: [] for span_id in by_id}
    for span in spans:
        if span.parent in after:  # a parent not in the export (a remote one) orders nothing here
            after[span.parent].append(span.span_id)
        for trace_id, linked in span.links:
            if trace_id == span.trace_id:
                after[linked].append(span.span_id)
    return after


def _no_cycle(spans: list[OtlpSpan], by_id: dict[str, OtlpSpan], path: str | Path) -> None:
    """A depth-first walk over parent and link edges (an explicit stack): a back edge is a cycle."""
    after = _edges(spans, by_id)
    state: dict[str, int] = {}  # 1: on the walk's path, 2: done
    for root in spans:
        if root.span_id in state:
            continue
        stack: list[tuple[str, int]] = [(root.span_id, 0)]
        state[root.span_id] = 1
        while stack:
            here, k = stack[-1]
            if k == len(after[here]):
                stack.pop()
                state[here] = 2
                continue
            stack[-1] = (here, k + 1)
            nxt = after[here][k]
            if state.get(nxt) == 1:
                ids = [s for s, _ in stack]
                cycle = [by_id[s] for s in ids[ids.index(nxt) :]]
                rule = (
                    f"its parents and links form a cycle: {_chain(cycle)} (a span cannot come after itself)"
                )
                raise InputError(path, _first(cycle).label, rule)
            if nxt not in state:
                state[nxt] = 1
                stack.append((nxt, 0))
