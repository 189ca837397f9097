"""peakopt's data model: frozen pydantic models, validated once on creation."""

from peakopt.models.errors import PeakoptError
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
