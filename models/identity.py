"""Content identity of a workflow or machine: what a stored result or a reference was computed for."""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel


def content_hash(model: BaseModel) -> str:
    """First 32 hex digits of the SHA-256 of the model's canonical JSON (its id or name included).

    Everything is content, the tasks' ``varies`` and a machine's ``soft`` too (scenarios, verdicts
    and stored results depend on them); references use :func:`nominal_hash`.

    The canonical JSON is the model's JSON form without the fields left at their
    defaults, keys sorted, no spaces: equal content gives an equal hash whatever
    the key order or formatting of the file it was read from.

    Parameters
    ----------
    model
        A :class:`~peakopt.models.Workflow` or :class:`~peakopt.models.Machine`.

    Returns
    -------
    str
    """
    return _digest(model.model_dump(mode="json", exclude_defaults=True))


def nominal_hash(model: BaseModel) -> str:
    """:func:`content_hash` of what a reference depends on (tasks' ``varies``, a machine's ``soft`` left out).

    A reference is solved at the nominal durations and demands, so saying (or changing) how they
    vary leaves it valid; and it is the best schedule that overflows no resource at all, so saying
    which resources are soft leaves it valid too. Reference records carry this hash. A workflow
    without ``varies`` and a machine without ``soft`` have their :func:`content_hash`.
    """
    document = model.model_dump(mode="json", exclude_defaults=True)
    for task in document.get("tasks", ()):
        task.pop("varies", None)
    if "capacity" in document:
        document.pop("soft", None)
    return _digest(document)


def _digest(document: object) -> str:
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]
