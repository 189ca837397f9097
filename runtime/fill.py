"""Filling one step of a workflow file with a measured task, keeping everything else of the file.

The file is a peakopt JSON document, a workflow (``{"id", "tasks"}``) or a suite
(``{"machines", "workflows"}``). The step keeps its id, dependencies, tool, call and the rest;
its ``duration``/``demand``/``profile``/``varies`` become the measured ones, and the measured
``meta`` keys (``command``, ``profile``) are set beside its own. The result is validated as
peakopt reads it before anything is written. Only the step's own text changes: the rest of the
file (its indentation, key order, blank lines, compact objects) is kept character for character,
and the step is written in the layout it had (on one line if it was, else indented as it was).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from peakopt.instances.errors import InputError
from peakopt.instances.native import parse_json, pretty_json
from peakopt.models import Task

#: The fields of a step that the measured task replaces.
MEASURED = ("duration", "demand", "profile", "varies")
_DECODER = json.JSONDecoder()


def read_document(path: str | Path) -> dict[str, Any]:
    """The JSON document of a workflow or suite file.

    Raises
    ------
    InputError
        When it cannot be read, is not JSON, or is neither a workflow nor a suite.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(path, "", f"cannot be read ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise InputError(
            path, f"line {exc.lineno}", f"not JSON ({exc.msg}); --workflow takes a peakopt JSON file"
        ) from None
    if not isinstance(data, dict) or not ("tasks" in data or "workflows" in data):
        raise InputError(path, "", "is not a peakopt workflow or suite (JSON with 'tasks' or 'workflows')")
    return data


def find_step(document: dict[str, Any], step: str, path: str | Path) -> dict[str, Any]:
    """The step's JSON object in the document (the one workflow holding it).

    Raises
    ------
    InputError
        When no workflow, or several, hold a step of that id.
    """
    workflows = document.get("workflows") if "workflows" in document else [document]
    found = [
        task
        for workflow in workflows or []
        if isinstance(workflow, dict)
        for task in workflow.get("tasks") or []
        if isinstance(task, dict) and task.get("id") == step
    ]
    if len(found) != 1:
        known = sorted(
            str(t.get("id"))
            for w in workflows or []
            if isinstance(w, dict)
            for t in w.get("tasks") or []
            if isinstance(t, dict)
        )
        why = "several workflows have a step" if found else "no step"
        listed = ", ".join(known[:10]) + (" ..." if len(known) > 10 else "")
        raise InputError(path, f"step {step!r}", f"{why} of that id (steps: {listed or 'none'})")
    return found[0]


def filled(document: dict[str, Any], step: str, task: Task, path: str | Path) -> str:
    """The file's text with ``step`` replaced by the measured ``task`` (validated as peakopt reads it).

    ``document`` is the file's JSON (:func:`read_document`); when the file still holds it, only
    the step's text is replaced, else the whole document is written indented.
    """
    target = find_step(document, step, path)
    for field in MEASURED:
        target.pop(field, None)
    measured = task.model_dump(mode="json", exclude_none=True, include={*MEASURED, "meta"})
    meta = {**(target.get("meta") or {}), **measured.pop("meta", {})}
    target.update(measured)
    target["meta"] = meta
    text = _spliced(path, step, target) or pretty_json(document)
    parse_json(text, path)  # what would be written must read back
    return text


def _spliced(path: str | Path, step: str, target: dict[str, Any]) -> str | None:
    """The file's text with the step's object replaced by ``target``; None when it cannot be found."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        spans = [(start, end) for start, end, found in _steps(text) if found == step]
    except (OSError, ValueError, IndexError):  # changed or unreadable since: write it whole
        return None
    if len(spans) != 1:
        return None
    start, end = spans[0]
    old = text[start:end]
    if "\n" not in old:
        return text[:start] + json.dumps(target, ensure_ascii=False) + text[end:]
    line_start = text.rfind("\n", 0, start) + 1
    base = text[line_start : _skip(text, line_start)]  # the step's line's indentation
    inner = old.split("\n", 1)[1]
    lead = inner[: len(inner) - len(inner.lstrip(" \t"))]  # the second line's: one level deeper
    unit = lead[len(base) :] if lead.startswith(base) and len(lead) > len(base) else "  "
    dumped = json.dumps(target, indent=unit, ensure_ascii=False).replace("\n", "\n" + base)
    return text[:start] + dumped + text[end:]


def _skip(text: str, at: int) -> int:
    """The index of the first character at or after ``at`` that is not JSON whitespace."""
    while at < len(text) and text[at] in " \t\n\r":
        at += 1
    return at


def _steps(text: str) -> list[tuple[int, int, object]]:
    """Every object of a ``tasks`` array in the JSON text: its start, end and ``id``.

    Raises
    ------
    ValueError, IndexError
        When the text is not JSON.
    """
    found: list[tuple[int, int, object]] = []

    def value(at: int, in_tasks: bool) -> tuple[int, object]:
        at = _skip(text, at)
        if text[at] == "[":
            return items(at, in_tasks), None
        if text[at] != "{":
            decoded, end = _DECODER.raw_decode(text, at)
            return end, decoded
        start, at, ident = at, _skip(text, at + 1), None
        while text[at] != "}":
            key, at = _DECODER.raw_decode(text, _skip(text, at))
            at, held = value(_skip(text, at) + 1, key == "tasks")  # past the colon
            ident = held if key == "id" else ident
            at = _skip(text, at)
            at = _skip(text, at + 1) if text[at] == "," else at
        if in_tasks:
            found.append((start, at + 1, ident))
        return at + 1, None

    def items(at: int, in_tasks: bool) -> int:
        at = _skip(text, at + 1)
        while text[at] != "]":
            at, _ = value(at, in_tasks)
            at = _skip(text, at)
            at = _skip(text, at + 1) if text[at] == "," else at
        return at + 1

    value(0, False)
    return found
