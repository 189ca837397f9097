"""Filling one step of a workflow file with a measured task, keeping everything else of the file.

The file is a peakopt JSON document, a workflow (``{"id", "tasks"}``) or a suite
(``{"machines", "workflows"}``). The step keeps its id, dependencies, tool, call and the rest;
its ``duration``/``demand``/``profile``/``varies`` become the measured ones, and the measured
``meta`` keys (``command``, ``profile``) are set beside its own. The result is validated as
peakopt reads it before anything is written.
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
    """The document's text with ``step`` replaced by the measured ``task`` (validated as peakopt reads it)."""
    target = find_step(document, step, path)
    for field in MEASURED:
        target.pop(field, None)
    measured = task.model_dump(mode="json", exclude_none=True, include={*MEASURED, "meta"})
    meta = {**(target.get("meta") or {}), **measured.pop("meta", {})}
    target.update(measured)
    target["meta"] = meta
    text = pretty_json(document)
    parse_json(text, path)  # what would be written must read back
    return text
