"""Machine profiles read from their own files (``peakopt schedule --machine FILE``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from peakopt.instances.documents import documents
from peakopt.instances.errors import InputError, from_validation
from peakopt.instances.loader import parse_text
from peakopt.instances.paths import read_text, resolve
from peakopt.models import Machine


def load_machines(path: str | Path) -> tuple[Machine, ...]:
    """The machine profiles of a file.

    The file holds one machine ``{"name", "capacity"}``, a list of them, or
    anything :func:`~peakopt.instances.load` reads that defines machines (a
    suite, a PSPLIB file, a PeakBench context). It is read once, so it may
    be a pipe.

    Raises
    ------
    InputError
        When the file cannot be read or defines no machine.
    """
    source = resolve(path)
    text = read_text(source)
    data = _machine_list(text, source)
    if data is not None:
        machines = []
        for position, item in enumerate(data):
            try:
                machines.append(Machine.model_validate(item))
            except ValidationError as exc:
                prefix = f"machine #{position + 1}" if len(data) > 1 else ""
                raise from_validation(source, exc, item, prefix) from None
        return tuple(machines)
    suite = parse_text(text, source)
    if not suite.machines:
        raise InputError(source, "", "defines no machine")
    return suite.machines


def _machine_list(text: str, source: Path) -> list[Any] | None:
    """The machines of a file that holds only machines, or None for any other input."""
    if source.suffix.lower() in (".sm", ".rcp", ".jsonl", ".ndjson") or not text.lstrip().startswith(
        ("{", "[")
    ):
        return None
    found = list(documents(text))
    if len(found) != 1 or found[0].error is not None:
        return None  # let parse_text() report what is wrong with it
    data = found[0].data
    if isinstance(data, dict) and "capacity" in data:
        data = [data]
    if isinstance(data, list) and data and all(isinstance(d, dict) and "capacity" in d for d in data):
        return data
    return None
