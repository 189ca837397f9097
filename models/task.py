"""Tool calls: a resource profile over a nominal duration (and how it varies), and predecessors."""

from __future__ import annotations

import math
import re
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, Field, model_validator

from peakopt.models.base import FROZEN, Cached, Demand, NonNegative
from peakopt.models.uncertainty import Varies, check_draws

__all__ = ["FROZEN", "REFERENCE", "Cached", "Demand", "NonNegative", "Segment", "Task", "references"]

#: How a tool call's argument names another step's output: ``$fetch_txn.output``
#: (a field may follow: ``$fetch_txn.output.amount``). The id runs up to the
#: first ``.output``; it holds no space, quote, bracket, comma, ``=`` or ``$``.
REFERENCE = re.compile(r"\$([^\s$(),=\[\]{}\"']+?)\.output(?![A-Za-z0-9_])")


def references(call: str) -> tuple[str, ...]:
    """The step ids a tool call's arguments name (``$id.output``), each once, in order."""
    return tuple(dict.fromkeys(REFERENCE.findall(call)))


class Segment(BaseModel):
    """A constant-usage phase of a task.

    Parameters
    ----------
    duration
        Length of the phase in seconds.
    demand
        Resource usage during the phase.
    """

    model_config = FROZEN

    duration: NonNegative
    demand: Demand = Field(default_factory=dict)


class Task(Cached):
    """One tool call of a workflow.

    A task has either a constant profile (``duration`` and ``demand``) or a
    piecewise ``profile`` of segments run back to back, never both.

    Parameters
    ----------
    id
        Unique within its workflow.
    tool, server
        What is called, for reports and plots.
    call
        The tool call with its arguments, as the agent issues it, e.g.
        ``risk.score_fraud(txn=$fetch_txn.output)``: an argument that is
        another step's output names it ``$<id>.output`` (:data:`REFERENCE`),
        and every step named so must be among ``depends_on`` (checked by the
        workflow). Planning prompts show it instead of the dependencies.
    depends_on
        Ids of the tasks that must finish before this one starts.
    duration, demand
        Constant profile.
    profile
        Piecewise-constant profile, e.g. a start-up spike then a steady phase.
    varies
        How a real run departs from the nominal duration and demand
        (:class:`~peakopt.models.uncertainty.Varies`); None: both fixed.
    meta
        Anything else (average CPU, tags, the source's fields).
    """

    model_config = FROZEN

    id: Annotated[str, Field(min_length=1)]
    tool: str | None = None
    server: str | None = None
    call: str | None = None
    depends_on: tuple[str, ...] = ()
    duration: NonNegative | None = None
    demand: Demand | None = None
    profile: tuple[Segment, ...] | None = None
    varies: Varies | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_profile(self) -> Task:
        if self.profile is None:
            if self.duration is None:
                raise ValueError("needs a 'duration' (with 'demand') or a 'profile'")
        else:
            if self.duration is not None or self.demand is not None:
                raise ValueError("has both 'profile' and 'duration'/'demand'; give one")
            if not self.profile:
                raise ValueError("has an empty 'profile'; give at least one segment")
        seen: set[str] = set()
        for pred in self.depends_on:
            if pred in seen:
                raise ValueError(f"lists predecessor {pred!r} twice")
            seen.add(pred)
        if self.varies is not None:
            peak = max((a for s in self.segments for a in s.demand.values()), default=0.0)
            check_draws(self.varies, self.length, peak)
        return self

    @cached_property
    def segments(self) -> tuple[Segment, ...]:
        """The profile as segments (a constant task is one segment); built once, read in hot loops."""
        if self.profile is not None:
            return self.profile
        return (Segment(duration=self.duration or 0.0, demand=self.demand or {}),)

    @property
    def consumes(self) -> tuple[str, ...]:
        """Ids of the steps whose outputs the call's arguments name (none without a call)."""
        return references(self.call) if self.call else ()

    @property
    def length(self) -> float:
        """Total run time in seconds."""
        if self.profile is None:
            return self.duration or 0.0
        return math.fsum(s.duration for s in self.profile)

    @property
    def resources(self) -> frozenset[str]:
        """Names of the resources the task uses at some point."""
        return frozenset(r for s in self.segments for r in s.demand)

    def peak(self, resource: str) -> float:
        """Highest demand on ``resource`` over the task's run (0 if unused)."""
        return max((s.demand.get(resource, 0.0) for s in self.segments), default=0.0)
