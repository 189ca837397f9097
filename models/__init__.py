"""peakopt's data model: frozen pydantic models, validated once on creation.

The names below load on first use (PEP 562), so that a module importing
:class:`PeakoptError` (every command's errors) or :mod:`peakopt.models.extras`
does not pay for pydantic and the models: a command's ``--help`` imports neither.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from peakopt.models.errors import PeakoptError

if TYPE_CHECKING:
    from peakopt.models.identity import content_hash, nominal_hash
    from peakopt.models.schedule import Edge, Schedule, SolveResult, Status
    from peakopt.models.task import Segment, Task
    from peakopt.models.uncertainty import Distribution, Empirical, Lognormal, Triangular, Uniform, Varies
    from peakopt.models.workflow import Machine, Suite, Workflow

__all__ = [
    "Distribution",
    "Edge",
    "Empirical",
    "Lognormal",
    "Machine",
    "PeakoptError",
    "Schedule",
    "Segment",
    "SolveResult",
    "Status",
    "Suite",
    "Task",
    "Triangular",
    "Uniform",
    "Varies",
    "Workflow",
    "content_hash",
    "nominal_hash",
]

#: public name -> the module that defines it
_HOMES = {
    "Distribution": "peakopt.models.uncertainty",
    "Edge": "peakopt.models.schedule",
    "Empirical": "peakopt.models.uncertainty",
    "Lognormal": "peakopt.models.uncertainty",
    "Machine": "peakopt.models.workflow",
    "Schedule": "peakopt.models.schedule",
    "Segment": "peakopt.models.task",
    "SolveResult": "peakopt.models.schedule",
    "Status": "peakopt.models.schedule",
    "Suite": "peakopt.models.workflow",
    "Task": "peakopt.models.task",
    "Triangular": "peakopt.models.uncertainty",
    "Uniform": "peakopt.models.uncertainty",
    "Varies": "peakopt.models.uncertainty",
    "Workflow": "peakopt.models.workflow",
    "content_hash": "peakopt.models.identity",
    "nominal_hash": "peakopt.models.identity",
}


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
