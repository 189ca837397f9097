"""Content identity of a workflow or machine: what a stored result or a reference was computed for."""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel


def content_hash(model: BaseModel) -> str:
    """First 32 hex digits of the SHA-256 of the model's canonical JSON (its id or name included).

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
    document = model.model_dump(mode="json", exclude_defaults=True)
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]
