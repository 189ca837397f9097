"""Read a predicted dependency structure (PeakBench's Dimension I answer).

Accepted shapes, at the top or nested under any key (``dependency_structure``,
``dependencies``, ``edges``... are searched first, keys holding *final*
before them):

- a map of step -> predecessors: ``{"decide": ["lookup", "score"], "lookup": []}``
  (a single id may stand for a list of one; ``null`` for none; a predecessor
  may be an object naming its step, ``{"id": "lookup"}``), or of step ->
  ``{"depends_on": [...]}``;
- a list of edges: ``[["lookup", "decide"], ...]`` or
  ``[{"from": "lookup", "to": "decide"}, ...]`` (``source``/``target`` too);
- a list of steps, at least one of them with its predecessors:
  ``[{"id": "decide", "depends_on": ["lookup"]}, {"id": "lookup"}]``;
- the empty structure under a structure key, ``{"edges": []}``,
  ``{"dependencies": {}}``, ``{"dependency_structure": {}}``: no dependency
  at all, a valid prediction.

A predecessor list the reader cannot take (an object naming no step, a
number that is not an id) makes the prediction invalid with that reason: an
edge is never silently dropped. The steps a prediction mentions are its keys,
the ids in its lists and the ends of its edges.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable
from dataclasses import dataclass
from typing import Any

from peakopt.oracle.answers import reasons
from peakopt.oracle.answers.answer import Ambiguous, Reading, choose_reading, split_reasoning
from peakopt.oracle.answers.extract import find_json, find_parts, is_id, naming, step_of
from peakopt.oracle.judge.verdict import Violation

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
PRED_KEYS = frozenset({"depends_on", "dependencies", "predecessors", "parents", "after", "requires", "deps"})
EDGE_KEYS = (("from", "to"), ("source", "target"), ("before", "after"), ("u", "v"))
FINAL_KEYS = ("final", "final_answer", "final_structure", "final_dependencies", "final_dependency_structure")


@dataclass(frozen=True)
class Structure:
    """A predicted dependency graph.

    Attributes
    ----------
    nodes
        Every step the prediction mentions.
    edges
        ``(predecessor, successor)`` pairs.
    problems
        Parts that could not be read (each makes the prediction invalid).
    """

    nodes: frozenset[str]
    edges: frozenset[tuple[str, str]]
    problems: tuple[str, ...] = ()


EMPTY = Structure(frozenset(), frozenset())


def _id(item: Any) -> str | None:
    """A predecessor: an id, or an object naming one."""
    return str(item) if is_id(item) else step_of(item)


def _ids(raw: Any) -> list[str] | None:
    """A predecessor list: ids (or objects naming them), one of them, or null; None for anything else."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        one = _id(raw)
        return None if one is None else [one]
    ids = [_id(item) for item in raw]
    return None if None in ids else [i for i in ids if i is not None]


def _preds_of(raw: Any) -> tuple[list[str] | None, bool]:
    """The predecessors an entry gives, and whether it names them (a predecessor key, or a plain list)."""
    if isinstance(raw, dict):
        key = next((k for k in raw if k in PRED_KEYS), None)
        return (None, False) if key is None else (_ids(raw[key]), True)
    return _ids(raw), True


def _edge(item: Any) -> tuple[str, str] | None:
    if isinstance(item, list) and len(item) == 2 and all(map(is_id, item)):
        return str(item[0]), str(item[1])
    if isinstance(item, dict):
        for a, b in EDGE_KEYS:
            if is_id(item.get(a)) and is_id(item.get(b)):
                return str(item[a]), str(item[b])
    return None


def _unreadable(step: str, raw: Any) -> str:
    return f"step {step!r}: predecessors {raw!r} are not step ids (or objects naming one)"


def _from_list(items: list[Any]) -> Structure | None:
    nodes: set[str] = set()
    edges: set[tuple[str, str]] = set()
    problems: list[str] = []
    named = False  # some item gives an edge or predecessors: a list of bare steps is no structure
    for item in items:
        edge, step = _edge(item), step_of(item)
        if edge is not None:
            nodes.update(edge)
            edges.add(edge)
            named = True
        elif step is not None:
            preds, given = _preds_of(item)
            nodes.add(step)
            if preds is None and given:
                problems.append(_unreadable(step, next(v for k, v in item.items() if k in PRED_KEYS)))
            named = named or given
            nodes.update(preds or ())
            edges.update((p, step) for p in preds or ())
        else:
            return None  # not a list of edges or steps
    return Structure(frozenset(nodes), frozenset(edges), tuple(problems)) if named else None


def _from_map(node: dict[str, Any], steps: Collection[str], keyed: bool) -> Structure | None:
    """A map of step -> predecessors; ``keyed`` when it sits under a structure key.

    Only a map under a structure key, or one with some predecessor list (a
    list, or an object with a predecessor key), is a structure: a map of
    steps to numbers or text is a schedule or descriptions. Within a
    structure, an entry that is no predecessor list is a problem, not dropped.
    """
    wrapped = (k for k, v in node.items() if isinstance(v, dict | list) and k not in steps)
    if any(k.lower() in STRUCTURE_KEYS + FINAL_KEYS for k in wrapped):
        return None  # a wrapper: the structure is inside
    listed = any(isinstance(v, list) or (isinstance(v, dict) and PRED_KEYS & v.keys()) for v in node.values())
    if not (keyed or listed):
        return None
    nodes: set[str] = set()
    edges: set[tuple[str, str]] = set()
    unreadable: list[str] = []
    for step, raw in node.items():
        preds, _ = _preds_of(raw)
        if preds is None and (step in steps or not steps):
            unreadable.append(_unreadable(step, raw))
            nodes.add(step)
            continue
        if preds is None or (steps and step not in steps and isinstance(raw, str)):
            continue  # commentary beside the structure
        nodes.add(step)
        nodes.update(preds)
        edges.update((p, step) for p in preds)
    if not nodes or (steps and not nodes & set(steps)):
        return None  # another shape
    return Structure(frozenset(nodes), frozenset(edges), tuple(unreadable))


def _accept(node: Any, key: str | None, steps: Collection[str]) -> Structure | None:
    if not node and key is not None and key.lower() in STRUCTURE_KEYS and key.lower() != "steps":
        return EMPTY  # {"edges": []}: no dependency at all ("steps": [] lists no step, it says nothing)
    if isinstance(node, list):
        return _from_list(node)
    if isinstance(node, dict):
        return _from_map(node, steps, key is not None and key.lower() in STRUCTURE_KEYS + FINAL_KEYS)
    return None


def parse_structure(value: Any, steps: Collection[str] = ()) -> Structure | None:
    """Interpret a decoded JSON value as a dependency structure (None if no part of it is one).

    The first part found is taken, breadth-first, under keys holding *final*
    first, then under :data:`STRUCTURE_KEYS`.
    """
    found = find_parts(value, lambda node, key: _accept(node, key, steps), FINAL_KEYS + STRUCTURE_KEYS)
    return found[0][0] if found else None


def _key(structure: Structure) -> Hashable:
    return structure.nodes, structure.edges, structure.problems


def structure_from_response(text: str, steps: Collection[str] = ()) -> Structure | Violation:
    """Extract a dependency structure from an LLM's raw answer, or say why there is none.

    Reasoning blocks and several structures in one answer follow
    :mod:`peakopt.oracle.answers.answer`'s rule (equal ones are one; otherwise the one
    marked final, else ``ambiguous``); a structure cut off at the end of the
    text is ``truncated``, one left open before its code fence closes ``unclosed``.
    """
    if not text.strip():
        return reasons.empty()
    parts, any_json = split_reasoning(text), False
    for part in (parts.answer, parts.reasoning):
        decoded = find_json(part, naming(steps))
        any_json = any_json or bool(decoded)
        readings = [
            Reading(found, d) for d in decoded if (found := parse_structure(d.value, steps)) is not None
        ]
        if not readings:
            continue
        chosen = choose_reading(readings, part, _key)
        if isinstance(chosen, Ambiguous):
            return Violation(kind="ambiguous", message=chosen.message("structures"))
        if chosen.span.unclosed:
            return reasons.unclosed(chosen.span.unclosed)
        if chosen.span.truncated:
            return reasons.truncated()
        return chosen.value
    if not any_json:
        return reasons.no_json(text)
    return reasons.holds_none("dependency structure")
