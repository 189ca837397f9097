"""Machine profiles read from their own files (``peakopt schedule --machine FILE``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from peakopt.instances.errors import InputError, from_validation
from peakopt.instances.loader import load, resolve
from peakopt.models import Machine


def load_machines(path: str | Path) -> tuple[Machine, ...]:
    """The machine profiles of a file.

    The file holds one machine ``{"name", "capacity"}``, a list of them, or
    anything :func:`~peakopt.instances.load` reads that defines machines (a
    suite, a PSPLIB file, a PeakBench context).

    Raises
    ------
    InputError
        When the file cannot be read or defines no machine.
    """
    source = resolve(path)
    data = _json(source)
    if isinstance(data, dict) and "capacity" in data:
        data = [data]
    if isinstance(data, list) and data and all(isinstance(d, dict) and "capacity" in d for d in data):
        machines = []
        for position, item in enumerate(data):
            try:
                machines.append(Machine.model_validate(item))
            except ValidationError as exc:
                prefix = f"machine #{position + 1}" if len(data) > 1 else ""
                raise from_validation(source, exc, item, prefix) from None
        return tuple(machines)
    suite = load(path)
    if not suite.machines:
        raise InputError(source, "", "defines no machine")
    return suite.machines


def _json(source: Path) -> Any:
    """The decoded JSON document of ``source``, or None when it is not one JSON document."""
    if source.suffix.lower() in (".sm", ".rcp", ".jsonl", ".ndjson") or not source.is_file():
        return None
    try:
        return json.loads(source.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None  # let load() report what is wrong with it
