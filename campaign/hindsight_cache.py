"""Perfect-information bounds as records, their cache key, and the caches that keep them.

A :class:`Bound` is what :mod:`peakopt.campaign.hindsight` finds for one realised scenario;
:func:`scenario_key` names the scenario by its content; a :class:`BoundCache` keeps bounds by
that key between runs: in memory (:class:`MemoryCache`) or in the ``bounds`` table of a results
store (:class:`StoreBounds`), so that a rerun, another method or policy, and another noise level
that realises the same workflow reuse them.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from peakopt.campaign.store import Store
from peakopt.models import Machine, Schedule, Workflow

#: How a bound was found: the layers of :func:`peakopt.solver.quick_optimum` in order, or an error.
Source = Literal["shortcut", "cliques", "cpsat", "error"]
SOURCES: tuple[Source, ...] = ("shortcut", "cliques", "cpsat", "error")

#: What is known of a scenario's optimum.
BoundStatus = Literal["optimal", "feasible", "error"]


@dataclass(frozen=True)
class Bound:
    """The perfect-information bound of one realised scenario.

    Attributes
    ----------
    status
        ``optimal`` (``makespan`` is the realised optimum), ``feasible`` (the optimum lies in
        [``lower_bound``, ``makespan``]) or ``error`` (nothing is known; ``lower_bound`` 0).
    makespan
        The best safe makespan found (None on error).
    lower_bound
        A proven lower bound on the realised optimum (the makespan itself when optimal).
    source
        Which layer settled it (:data:`SOURCES`).
    time_limit
        The CP-SAT limit it was searched with (a cached ``feasible`` bound is searched again
        by a run with a longer one).
    seconds
        Wall time spent on it.
    starts
        The best schedule's starts by task position (empty on error).
    """

    status: BoundStatus
    makespan: float | None
    lower_bound: float
    source: Source
    time_limit: float
    seconds: float
    starts: tuple[float, ...] = ()

    @property
    def value(self) -> float | None:
        """What gaps are measured against: the optimum when proven, else the lower bound."""
        if self.status == "error":
            return None
        return self.makespan if self.status == "optimal" else self.lower_bound

    def gap(self, makespan: float) -> float | None:
        """``(makespan − value) / value``; None without a positive value.

        Against an unproven bound this is an upper bound on the true gap (like ``gap_vs_lb``).
        """
        value = self.value
        return None if value is None or value <= 0 else (makespan - value) / value

    def schedule(self, workflow: Workflow, machine: Machine) -> Schedule:
        """The best schedule found on the realised ``workflow``, for the oracle to check."""
        starts = dict(zip((t.id for t in workflow.tasks), self.starts, strict=True))
        return Schedule(workflow=workflow.id, machine=machine.name, starts=starts, source=self.source)

    def row(self, key: str) -> tuple[object, ...]:
        """The ``bounds`` row of the results store."""
        return (
            key,
            self.status,
            self.makespan,
            self.lower_bound,
            self.source,
            self.time_limit,
            self.seconds,
            json.dumps(self.starts),
        )

    @classmethod
    def from_row(cls, row: Sequence[object]) -> Bound:
        """A ``bounds`` row (without its key) as a bound."""
        status, makespan, lower, source, limit, seconds, starts = row
        return cls(
            cast(BoundStatus, status),
            None if makespan is None else float(cast(float, makespan)),
            float(cast(float, lower)),
            cast(Source, source),
            float(cast(float, limit)),
            float(cast(float, seconds)),
            tuple(json.loads(str(starts))),
        )

    def serves(self, time_limit: float) -> bool:
        """Whether a run that would search ``time_limit`` seconds can take this bound as it is."""
        return self.status == "optimal" or (self.status == "feasible" and self.time_limit >= time_limit)


def scenario_key(
    workflow_hash: str, machine_hash: str, lengths: Sequence[float], scales: Sequence[float]
) -> str:
    """The cache key of a realised scenario: its content, not where it came from.

    The realised workflow is the nominal one with each task's length and demand multiplier
    replaced (a profile scaled proportionally), so the nominal workflow's and the machine's
    content hashes with the realised numbers name it; the seed, noise level or policy that
    produced it do not, and equal realisations share their bound.
    """
    text = json.dumps([workflow_hash, machine_hash, list(lengths), list(scales)], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def failed_bound(time_limit: float, seconds: float = 0.0) -> Bound:
    """The bound of a scenario nothing is known of (never cached: the next run tries again)."""
    return Bound("error", None, 0.0, "error", time_limit, seconds)


class BoundCache(ABC):
    """Where bounds are kept by :func:`scenario_key` between runs."""

    @abstractmethod
    def get(self, keys: Iterable[str]) -> dict[str, Bound]:
        """The bounds held of these keys."""

    @abstractmethod
    def put(self, found: Mapping[str, Bound]) -> None:
        """Keep these bounds (errors are not kept)."""


class MemoryCache(BoundCache):
    """Bounds in a dictionary, for one process's lifetime."""

    def __init__(self) -> None:
        self.bounds: dict[str, Bound] = {}

    def get(self, keys: Iterable[str]) -> dict[str, Bound]:
        """The bounds held of these keys."""
        return {k: self.bounds[k] for k in keys if k in self.bounds}

    def put(self, found: Mapping[str, Bound]) -> None:
        """Keep these bounds (errors are not kept)."""
        self.bounds.update((k, b) for k, b in found.items() if b.status != "error")


class StoreBounds(BoundCache):
    """The ``bounds`` table of an open results store (it stays the caller's to close)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, keys: Iterable[str]) -> dict[str, Bound]:
        """The bounds the store holds of these keys."""
        return {k: Bound.from_row(row) for k, row in self.store.read_bounds(keys).items()}

    def put(self, found: Mapping[str, Bound]) -> None:
        """Write these bounds in one transaction (errors are not kept)."""
        self.store.write_bounds([b.row(k) for k, b in found.items() if b.status != "error"])
