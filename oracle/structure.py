"""Read a predicted dependency structure (PeakBench's Dimension I answer).

Accepted shapes, at the top or nested under any key (``dependency_structure``,
``dependencies``, ``edges``... are searched first):

- a map of step -> predecessors: ``{"decide": ["lookup", "score"], "lookup": []}``
  (a single id may stand for a list of one; ``null`` for none), or of step ->
  ``{"depends_on": [...]}``;
- a list of edges: ``[["lookup", "decide"], ...]`` or
  ``[{"from": "lookup", "to": "decide"}, ...]`` (``source``/``target`` too);
- a list of steps: ``[{"id": "decide", "depends_on": ["lookup"]}, ...]``.

The steps a prediction mentions are its keys, the ids in its lists and the
ends of its edges.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from peakopt.oracle.extract import find_json, is_id, search, step_of
from peakopt.oracle.score import Violation

STRUCTURE_KEYS = (
    "dependency_structure",
    "dependencies",
    "depends_on",
    "predecessors",
    "edges",
    "graph",
    "dag",
    "steps",
)
PRED_KEYS = ("depends_on", "dependencies", "predecessors", "after", "requires", "deps")
EDGE_KEYS = (("from", "to"), ("source", "target"), ("before", "after"), ("u", "v"))


@dataclass(frozen=True)
class Structure:
    """A predicted dependency graph.

    Attributes
    ----------
    nodes
        Every step the prediction mentions.
    edges
        ``(predecessor, successor)`` pairs.
    """

    nodes: frozenset[str]
    edges: frozenset[tuple[str, str]]


def _ids(raw: Any) -> list[str] | None:
    """A predecessor list: a list of ids, one id, or null; None when it is something else."""
    if raw is None:
        return []
    if is_id(raw):
        return [str(raw)]
    if isinstance(raw, list) and all(map(is_id, raw)):
        return [str(x) for x in raw]
    return None


def _preds_of(raw: Any) -> list[str] | None:
    if isinstance(raw, dict):
        return next((_ids(raw[k]) for k in PRED_KEYS if k in raw), None)
    return _ids(raw)


def _edge(item: Any) -> tuple[str, str] | None:
    if isinstance(item, list) and len(item) == 2 and all(map(is_id, item)):
        return str(item[0]), str(item[1])
    if isinstance(item, dict):
        for a, b in EDGE_KEYS:
            if is_id(item.get(a)) and is_id(item.get(b)):
                return str(item[a]), str(item[b])
    return None


def _from_list(items: list[Any]) -> Structure | None:
    nodes: set[str] = set()
    edges: set[tuple[str, str]] = set()
    for item in items:
        edge = _edge(item)
        step = step_of(item)
        preds = _preds_of(item) if step is not None else None
        if edge is not None:
            nodes.update(edge)
            edges.add(edge)
        elif step is not None and preds is not None:
            nodes.add(step)
            nodes.update(preds)
            edges.update((p, step) for p in preds)
        elif step is not None:
            nodes.add(step)
        else:
            return None  # not a list of edges or steps
    return Structure(frozenset(nodes), frozenset(edges)) if nodes else None


def _from_map(node: dict[str, Any], steps: Collection[str]) -> Structure | None:
    wrapped = (k for k, v in node.items() if isinstance(v, dict | list) and k not in steps)
    if any(k.lower() in STRUCTURE_KEYS for k in wrapped):
        return None  # a wrapper: the structure is inside
    nodes: set[str] = set()
    edges: set[tuple[str, str]] = set()
    for step, raw in node.items():
        preds = _preds_of(raw)
        if preds is None and step in steps:
            return None  # a step's entry that is no predecessor list: another shape
        if preds is None or (steps and step not in steps and isinstance(raw, str)):
            continue  # commentary beside the structure
        nodes.add(step)
        nodes.update(preds)
        edges.update((p, step) for p in preds)
    if not nodes or (steps and not nodes & set(steps)):
        return None
    return Structure(frozenset(nodes), frozenset(edges))


def parse_structure(value: Any, steps: Collection[str] = ()) -> Structure | None:
    """Interpret a decoded JSON value as a dependency structure (None if no part of it is one)."""

    def accept(node: Any, key: str | None) -> Structure | None:
        if isinstance(node, list):
            return _from_list(node)
        if isinstance(node, dict):
            return _from_map(node, steps)
        return None

    return search(value, accept, STRUCTURE_KEYS)


def structure_from_response(text: str, steps: Collection[str] = ()) -> Structure | Violation:
    """Extract a dependency structure from an LLM's raw answer, or say why there is none."""
    if not text.strip():
        return Violation(kind="parse", message="empty response")
    decoded = find_json(text)
    for candidate in decoded:
        found = parse_structure(candidate.value, steps)
        if found is not None:
            return found
    if not decoded:
        return Violation(kind="parse", message="no JSON in the response")
    return Violation(kind="parse", message="the response's JSON holds no dependency structure")
