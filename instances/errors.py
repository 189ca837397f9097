"""Errors of files that name the file, the item (or the option) and the broken rule."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from peakopt.models import PeakoptError

if TYPE_CHECKING:
    from pydantic import ValidationError  # only for annotations: a command's --help imports no pydantic


class InputError(PeakoptError, ValueError):
    """A file (or text) that peakopt cannot use.

    ``str(error)`` is one line: ``<file>: <item>: <rule>``.

    Parameters
    ----------
    source
        The file (or a description of the input, e.g. ``<stdin>``).
    item
        What in the file is wrong, e.g. ``workflow 'refund' task 'scan'``;
        empty when the whole file is.
    rule
        The rule it breaks.
    """

    def __init__(self, source: str | Path, item: str, rule: str) -> None:
        self.source = str(source)
        self.item = item
        self.rule = rule
        where = f"{self.source}: {item}" if item else self.source
        super().__init__(f"{where}: {rule}")


class OutputError(PeakoptError):
    """An output that cannot be written: ``<option> <path>: <rule>`` on one line."""

    def __init__(self, option: str, path: str | Path, rule: str) -> None:
        super().__init__(f"{option} {path}: {rule}")


_KINDS = {
    "tasks": "task",
    "workflows": "workflow",
    "machines": "machine",
    "profile": "segment",
    "steps": "step",  # a trace's records
    "replans": "replan",
}


def _name(container: str, position: int, value: Any) -> str:
    """Human name of the ``position``-th element of ``container``."""
    kind = _KINDS.get(container, container)
    if isinstance(value, dict):
        for key in ("id", "name"):
            if isinstance(value.get(key), str) and value[key]:
                return f"{kind} {value[key]!r}"
    return f"{kind} #{position + 1}"


def describe_location(loc: Sequence[int | str], data: Any) -> str:
    """Turn a pydantic error location into words, using names from ``data``.

    ``('workflows', 0, 'tasks', 2, 'duration')`` becomes
    ``workflow 'w1' task 'scan' duration``.
    """
    words = [_root_name(data)] if _root_name(data) else []
    node = data
    container = ""
    for depth, key in enumerate(loc, start=1):
        child = node[key] if _can_index(node, key) else None
        if isinstance(key, int):
            words.append(_name(container, key, child))
            container = ""
        elif isinstance(child, list) and depth < len(loc):
            container = key  # named by its element, e.g. "task 'a'"
        else:
            words.append(str(key))
        node = child
    return " ".join(words)


def _root_name(data: Any) -> str:
    """``workflow 'w'`` when the document itself is a workflow (or a machine)."""
    if isinstance(data, dict):
        for key, kind in (("tasks", "workflow"), ("capacity", "machine")):
            if key in data:
                return _name(kind, 0, data)
    return ""


def _can_index(node: Any, key: int | str) -> bool:
    if isinstance(node, dict):
        return key in node
    if isinstance(node, list | tuple) and isinstance(key, int):
        return 0 <= key < len(node)
    return False


def from_validation(source: str | Path, exc: ValidationError, data: Any, prefix: str = "") -> InputError:
    """The first error of a pydantic ``ValidationError`` as an :class:`InputError`."""
    first = exc.errors()[0]
    loc = tuple(first["loc"])
    kind = first["type"]
    if kind == "extra_forbidden":
        item, rule = describe_location(loc[:-1], data), f"unknown key {loc[-1]!r}"
    elif kind == "missing":
        item, rule = describe_location(loc[:-1], data), f"missing key {loc[-1]!r}"
    elif kind == "float_type" and isinstance(first.get("input"), str | bool):
        # strict numbers: say why "1.5" is not one, which "should be a valid number" does not
        item, rule = describe_location(loc, data), f"must be a JSON number, got {json.dumps(first['input'])}"
    else:
        item = describe_location(loc, data)
        message = str(first["msg"]).removeprefix("Value error, ")
        rule = message[:1].lower() + message[1:]
        if kind not in ("value_error", "model_type", "dict_type") and "input" in first:
            rule += f", got {first['input']!r}"
    item = " ".join(part for part in (prefix, item) if part)
    return InputError(source, item, rule)
