"""JSON Lines files of records: reference results, schedules, raw LLM responses, predictions.

- A reference file holds one :class:`~peakopt.models.SolveResult` per line,
  exactly ``result.model_dump(mode="json")`` (what ``peakopt solve`` writes).
  A line that is not a result is an :class:`InputError`; what a result
  claims is checked by the oracle before use
  (:mod:`peakopt.oracle.judge.references`).
- A schedule file holds ``{"workflow", "machine", "source", "starts"}``
  records, a response file ``{"workflow", "machine", "source", "response"}``,
  a predictions file ``{"workflow", "source", "dependencies" | "edges" |
  "response"}``; any may add an ``id``. These are read leniently: a line
  that is not a JSON object becomes a :class:`Record` with an ``error``, so
  that the oracle can count it as invalid instead of dropping it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from peakopt.instances.documents import Document, decode_all, documents
from peakopt.instances.errors import from_validation
from peakopt.instances.native import to_jsonl, write_atomic
from peakopt.instances.paths import read_text, resolve
from peakopt.models import Schedule, SolveResult


@dataclass(frozen=True)
class Record:
    """One line of a records file.

    Attributes
    ----------
    line
        1-based line number (the element number for a JSON array file).
    data
        The decoded object, or None when the line is not a JSON object.
    error
        Why the line could not be read, if so; without the line, which
        whoever shows the error names once.
    """

    line: int
    data: dict[str, Any] | None
    error: str | None = None


def _record(document: Document) -> Record:
    if document.error is not None:
        return Record(document.line, None, document.error)
    if not isinstance(document.data, dict):
        return Record(document.line, None, f"not a JSON object ({type(document.data).__name__})")
    return Record(document.line, document.data)


def read_records(path: str | Path) -> list[Record]:
    """Every record of a JSON Lines file (or of a JSON array), bad lines included.

    Records may also be pretty-printed, one after another; each is named by
    the line it starts on.

    Raises
    ------
    InputError
        When the file cannot be read or is empty.
    """
    found = list(documents(read_text(path)))
    if len(found) == 1 and isinstance(found[0].data, list):
        array = found[0].data
        return [_record(Document(n, item)) for n, item in enumerate(array, start=1)]
    return [_record(document) for document in found]


def reference_lines(path: str | Path) -> list[tuple[int, SolveResult]]:
    """The reference results of a JSON Lines file, each with its line number.

    The results are read, not yet checked: see
    :func:`peakopt.oracle.judge.references.check_references`.

    Raises
    ------
    InputError
        Naming the line, when a line is not a valid result, or the file is
        missing or empty.
    """
    source = resolve(path)
    results = []
    for document in decode_all(read_text(source), source, by_line=True):
        where = f"line {document.line}"
        try:
            results.append((document.line, SolveResult.model_validate(document.data)))
        except ValidationError as exc:
            raise from_validation(source, exc, document.data, where) from None
    return results


def read_references(path: str | Path) -> list[SolveResult]:
    """The reference results of a JSON Lines file (see :func:`reference_lines`)."""
    return [result for _, result in reference_lines(path)]


def reference_record(result: SolveResult) -> dict[str, Any]:
    """The JSON object of one reference line."""
    return result.model_dump(mode="json")


def schedule_record(schedule: Schedule) -> dict[str, Any]:
    """The JSON object of one schedule line: workflow, machine, source, starts."""
    return {
        "workflow": schedule.workflow,
        "machine": schedule.machine,
        "source": schedule.source,
        "starts": dict(schedule.starts),
    }


def response_record(workflow: str, machine: str | None, source: str | None, response: str) -> dict[str, Any]:
    """The JSON object of one raw-response line."""
    return {"workflow": workflow, "machine": machine, "source": source, "response": response}


def write_jsonl(path: str | Path, records: Iterable[Mapping[str, Any]]) -> None:
    """Write records as JSON Lines, atomically (a crash leaves no half-written file)."""
    write_atomic(path, to_jsonl(dict(r) for r in records))


def append_jsonl(path: str | Path, record: Mapping[str, Any]) -> None:
    """Append one record as a line and flush, for files written incrementally."""
    with Path(path).open("a", encoding="utf-8") as out:
        out.write(json.dumps(dict(record), separators=(",", ":")) + "\n")
        out.flush()


def write_references(path: str | Path, results: Iterable[SolveResult]) -> None:
    """Write reference results as JSON Lines, atomically."""
    write_jsonl(path, (reference_record(r) for r in results))
