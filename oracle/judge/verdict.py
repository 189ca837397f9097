"""What the oracle says about a schedule."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ViolationKind = Literal[
    "dependency",
    "missing",
    "unknown",
    "negative_start",
    "overflow",
    "parse",
    "non_numeric",
    "duplicate",
    "instance",
    "ambiguous",
    "truncated",
    "unclosed",
    "unit",
    "failed",
]


class Violation(BaseModel):
    """One broken rule, with a readable message.

    Parameters
    ----------
    kind
        ``dependency``, ``missing`` (a task has no start), ``unknown`` (a start
        for no task), ``negative_start`` or ``overflow`` (load above capacity).
        Records read from files add ``parse`` (no schedule in the text),
        ``non_numeric`` (a start that is not a finite number), ``duplicate``
        (a step given twice), ``instance`` (the record names a workflow or
        machine that is not in the suite), ``ambiguous`` (an answer gives
        several different schedules and marks none as final), ``truncated``
        (an answer cut off inside its JSON), ``unclosed`` (its JSON left open
        before its code fence closes) and ``unit`` (a time in a unit peakopt
        does not read, or a clock time); ``unknown`` also names timings an
        answer gives for ids that are no step (see
        :mod:`peakopt.oracle.answers.reasons`); a run record adds
        ``failed`` (a step of the run failed).
    message
        E.g. ``a -> b: b starts at 3.0 before a ends at 4.5`` or
        ``memory_mb 10240/8192 over [0.0, 4.8)``.
    tasks
        The tasks involved.
    resource, start, end, load, capacity
        For overflows: the resource, the interval and the peak load in it.
    avoidable
        For overflows: False when the whole interval is overload that no
        schedule avoids (one task over capacity on its own).
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    kind: ViolationKind
    message: str
    tasks: tuple[str, ...] = ()
    resource: str | None = None
    start: float | None = None
    end: float | None = None
    load: float | None = None
    capacity: float | None = None
    avoidable: bool | None = None


class ResourceScore(BaseModel):
    """Per-resource figures.

    Parameters
    ----------
    capacity
        The machine's capacity.
    peak
        Highest load over the schedule.
    peak_ratio
        ``peak / capacity``.
    violation_area
        ∫ max(0, load/capacity − 1) dτ, this resource's part of cva.
    floor_area
        This resource's part of cva_floor.
    kind
        ``hard`` (its avoidable overflow makes the schedule unsafe) or ``soft`` (it slows the
        steps down, see :mod:`peakopt.oracle.judge.slowdown`), as the machine declares it (every
        resource is hard with ``soft_as_hard``).
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    capacity: float
    peak: float
    peak_ratio: float
    violation_area: float
    floor_area: float
    kind: Literal["hard", "soft"] = "hard"


class Score(BaseModel):
    """The oracle's verdict on one schedule (see the metric table in the README).

    ``valid`` is False when a task is missing or unknown, a start is
    negative, or a dependency is broken; the metrics are still computed on
    the tasks that have a start. ``mru`` is None when undefined (a span of 0:
    every step has zero duration; or a machine without resources), and so are
    ``strict_mru`` and ``safe_mru`` where they would be ``mru``; they are 0
    where the schedule overflows (``strict_mru``) or is unsafe (``safe_mru``).
    ``gap``, ``gap_vs_lb`` and ``gap_vs_ub`` are filled only when a reference
    result is given.

    ``safe`` looks at the hard resources only: ``avoidable_cva_hard`` must be 0, while
    ``avoidable_cva_soft`` (overflow of soft resources such as CPU) slows the steps down
    instead. ``slowed_makespan`` is how long a valid schedule takes under that slowdown
    (:mod:`peakopt.oracle.judge.slowdown`), the makespan without avoidable soft overflow; an unsafe
    one has it too (its hard overflow changes no rate), though it has no gap and earns nothing.
    It is None for an invalid one: processor sharing starts a step once its predecessors have
    really ended, so for a broken dependency or a missing step it would time another, repaired
    schedule. The gaps and the efficiency of a safe schedule are figured from it. ``cva``,
    ``avoidable_cva`` and ``strict_mru`` stay PeakBench's, over every resource.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    workflow: str
    machine: str | None = None
    source: str | None = None
    valid: bool
    makespan: float
    cva: float
    cva_floor: float
    avoidable_cva: float
    avoidable_cva_hard: float
    avoidable_cva_soft: float
    safe: bool
    mru: float | None
    strict_mru: float | None
    safe_mru: float | None
    dependency_violations: int
    resources: dict[str, ResourceScore] = Field(default_factory=dict)
    violations: tuple[Violation, ...] = ()
    gap: float | None = None
    gap_vs_lb: float | None = None
    gap_vs_ub: float | None = None
    slowed_makespan: float | None

    @property
    def reasons(self) -> list[str]:
        """Messages of the violations that make the schedule invalid."""
        return [v.message for v in self.violations if v.kind != "overflow"]
