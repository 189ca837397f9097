"""The perfect-information bound: the optimum of each realised scenario, solved fast and cached.

A policy that knew every realised duration in advance could do no better than the optimum of
the realised workflow; the expected gap of a policy to that optimum is what noise costs it, and
what no online policy can close entirely. A Monte Carlo run needs it for every scenario — the
bundled suite at 100 samples is 90,000 realised workflow × machine pairs per noise level — so
each is bounded by :func:`peakopt.solver.quick_optimum` (:func:`bound_one`), in layers, the
cheapest first — the heuristic portfolio against the critical-path and energy bounds
(``shortcut``), against the disjunctive clique bound (``cliques``), a short CP-SAT search
(``cpsat``) — and every claim checked by the oracle as every :func:`peakopt.solver.solve` result
is; an instance CP-SAT does not prove keeps its bound and status ``feasible``, and its gap is
then reported against the lower bound (an upper bound on the true gap, as ``gap_vs_lb``).

Bounds are cached by :func:`~peakopt.campaign.hindsight_cache.scenario_key` (the content of the
realised instance: the nominal content hashes of the workflow and the machine, and the realised
lengths and demand multipliers) in a :class:`~peakopt.campaign.hindsight_cache.BoundCache` — the
``bounds`` table of a results store (:class:`~peakopt.campaign.hindsight_cache.StoreBounds`), or
memory — so that a second run, and every other policy or method judged on the same scenarios
(common random numbers), reuses them. :func:`perfect_information` runs the missing ones on
the campaign pools and writes each chunk as it arrives.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, cast

from peakopt.campaign.executors import Executor, solve_deadline
from peakopt.campaign.hindsight_cache import (
    SOURCES,
    Bound,
    BoundCache,
    MemoryCache,
    Source,
    StoreBounds,
    failed_bound,
    scenario_key,
)
from peakopt.campaign.runner import Work, run_work
from peakopt.models import Machine, PeakoptError, Workflow, nominal_hash
from peakopt.oracle.tables.sampled import Optima
from peakopt.oracle.uncertain.scenarios import Scenarios
from peakopt.solver import quick_optimum

__all__ = [
    "BOUNDS",
    "SOURCES",
    "Bound",
    "BoundCache",
    "Bounds",
    "Chunk",
    "Fixed",
    "Job",
    "MemoryCache",
    "Realisations",
    "Sampled",
    "Source",
    "StoreBounds",
    "bound_one",
    "failed_bound",
    "hindsight_optima",
    "perfect_information",
    "scenario_jobs",
    "scenario_key",
]


def bound_one(workflow: Workflow, machine: Machine, *, time_limit: float = 1.0, seed: int = 0) -> Bound:
    """The optimum of one realised workflow on a machine, by the cheapest layer that proves it.

    Parameters
    ----------
    workflow
        The realised workflow (plain durations and demands).
    machine
        The machine.
    time_limit
        Seconds of CP-SAT search (one thread) when the bounds do not meet the heuristic.
    seed
        Seed of the heuristics and the solver.

    Returns
    -------
    Bound
        :func:`peakopt.solver.quick_optimum`'s result: optimal when a layer proves it — the
        shortcuts up to the heuristics' time tolerance (a relative 1e-9), CP-SAT exactly — else
        feasible with CP-SAT's bound; an error (never cached) when the solver fails or the
        oracle rejects what a layer claims.
    """
    began = time.perf_counter()
    try:
        result = quick_optimum(workflow, machine, time_limit=time_limit, seed=seed)
    except PeakoptError:
        result = None
    if result is None or result.makespan is None or result.starts is None or result.status == "error":
        return failed_bound(time_limit, time.perf_counter() - began)
    status: Literal["optimal", "feasible"] = "optimal" if result.status == "optimal" else "feasible"
    source = cast(Source, result.params["layer"])
    return Bound(
        status,
        result.makespan,
        result.lower_bound if result.lower_bound is not None else 0.0,
        source,
        time_limit,
        result.seconds,
        tuple(result.starts[t.id] for t in workflow.tasks),
    )


class Realisations(Protocol):
    """Realised workflows by sample number: :class:`peakopt.oracle.uncertain.scenarios.Scenarios` is one."""

    def workflow(self, k: int) -> Workflow:
        """The realised workflow of sample ``k`` (plain durations and demands)."""
        ...


class Sampled(Realisations, Protocol):
    """Scenarios with their realised numbers (:class:`peakopt.oracle.uncertain.scenarios.Scenarios`)."""

    @property
    def lengths(self) -> Sequence[Sequence[float]]:
        """Per sample, each task's realised run time."""
        ...

    @property
    def scales(self) -> Sequence[Sequence[float]]:
        """Per sample, each task's demand multiplier."""
        ...

    def __len__(self) -> int:
        """The number of samples."""
        ...


@dataclass(frozen=True)
class Fixed:
    """One realised workflow, as a source of realisations (every sample is it)."""

    realised: Workflow

    def workflow(self, k: int) -> Workflow:
        """The workflow, whatever ``k``."""
        return self.realised


@dataclass(frozen=True)
class Job:
    """One realised scenario to bound: its key, its machine, and where its workflow comes from.

    The realised workflow is built in the worker that bounds it (``scenarios.workflow(index)``),
    not in the parent: building 90,000 of them would be the parent's own bottleneck.
    """

    key: str
    machine: Machine
    scenarios: Realisations
    index: int = 0

    @classmethod
    def of(cls, key: str, workflow: Workflow, machine: Machine) -> Job:
        """A job of one realised workflow."""
        return cls(key, machine, Fixed(workflow))

    def workflow(self) -> Workflow:
        """The realised workflow."""
        return self.scenarios.workflow(self.index)


def scenario_jobs(workflow: Workflow, machine: Machine, scenarios: Sampled) -> list[Job]:
    """One job per sample of ``scenarios`` (of the nominal ``workflow``) on ``machine``, keyed by content."""
    # the realised workflow drops the nominal one's ``varies``: its nominal content names it
    nominal, box = nominal_hash(workflow), nominal_hash(machine)
    return [
        Job(scenario_key(nominal, box, scenarios.lengths[k], scenarios.scales[k]), machine, scenarios, k)
        for k in range(len(scenarios))
    ]


@dataclass(frozen=True)
class Chunk:
    """Jobs a worker bounds one after the other, and the settings of :func:`bound_one`."""

    jobs: tuple[Job, ...]
    time_limit: float
    seed: int

    def deadline(self) -> float:
        """Hard limit: every job's CP-SAT limit, twice over, and the model building."""
        return solve_deadline(self.time_limit * len(self.jobs))

    def parts(self) -> list[Chunk]:
        """One job per chunk (run so when the whole was lost with its worker)."""
        return [Chunk((job,), self.time_limit, self.seed) for job in self.jobs]


def run_chunk(chunk: Chunk) -> dict[str, Bound]:
    """In a worker: every job's bound."""
    return {
        job.key: bound_one(job.workflow(), job.machine, time_limit=chunk.time_limit, seed=chunk.seed)
        for job in chunk.jobs
    }


def failed_chunk(chunk: Chunk, message: str) -> dict[str, Bound]:
    """A chunk whose worker gave nothing: error bounds (the next run tries them again)."""
    return {job.key: failed_bound(chunk.time_limit) for job in chunk.jobs}


#: What the runner runs for :func:`perfect_information`.
BOUNDS: Work[Chunk, dict[str, Bound]] = Work(run_chunk, Chunk.deadline, failed_chunk, Chunk.parts)


@dataclass
class Bounds:
    """The bounds of a set of scenarios, and how they were found.

    Attributes
    ----------
    by_key
        Every bound, by :func:`scenario_key`.
    cached
        Distinct scenarios the cache already held.
    solved
        Distinct scenarios bounded now, by :data:`SOURCES` layer.
    seconds
        Wall time of the whole call.
    """

    by_key: dict[str, Bound]
    cached: int = 0
    solved: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def share(self, source: Source) -> float:
        """Share of the scenarios bounded now that ``source`` settled (0 when none were)."""
        total = sum(self.solved.values())
        return self.solved[source] / total if total else 0.0


def perfect_information(
    jobs: Iterable[Job],
    cache: BoundCache,
    *,
    executor: Executor | None = None,
    time_limit: float = 1.0,
    seed: int = 0,
    chunk: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> Bounds:
    """The bound of every job's scenario: from the cache, else solved (in parallel) and cached.

    Parameters
    ----------
    jobs
        The realised scenarios; several may share a key (they are solved once).
    cache
        Read first; every new bound is written to it as its chunk arrives (a run killed
        midway keeps what it found).
    executor
        Where the missing bounds are solved (the campaign pools); None: in this process.
    time_limit
        Seconds of CP-SAT search per scenario the shortcuts do not settle.
    seed
        Seed of the heuristics and the solver.
    chunk
        Scenarios per task on the executor.
    progress
        Called with (scenarios a chunk bounded, scenarios to bound in all) as each chunk arrives.

    Returns
    -------
    Bounds
        Every job's bound by key (``error`` where a worker was lost), with the counts.
    """
    began = time.perf_counter()
    distinct = {job.key: job for job in jobs}
    held = {k: b for k, b in cache.get(distinct).items() if b.serves(time_limit)}
    found = Bounds(dict(held), cached=len(held))
    todo = [job for key, job in distinct.items() if key not in held]
    chunks = [Chunk(tuple(todo[i : i + chunk]), time_limit, seed) for i in range(0, len(todo), chunk)]

    def keep(_: Chunk, bounds: dict[str, Bound]) -> None:
        cache.put(bounds)
        found.by_key.update(bounds)
        found.solved.update(b.source for b in bounds.values())
        if progress is not None:
            progress(len(bounds), len(todo))

    if executor is None:
        for part in chunks:
            keep(part, run_chunk(part))
    else:
        for _ in run_work(executor, BOUNDS, chunks, keep):
            pass
    found.seconds = time.perf_counter() - began
    return found


def hindsight_optima(
    cache: BoundCache | None = None,
    *,
    time_limit: float = 1.0,
    seed: int = 0,
    executor: Executor | None = None,
) -> Optima:
    """The perfect-information bound in the form :class:`~peakopt.oracle.tables.sampled.Sampling` asks for it.

    Parameters
    ----------
    cache
        Where bounds are kept between pairs and runs (a fresh in-memory cache by default).
    time_limit, seed, executor
        As :func:`perfect_information` takes them.

    Returns
    -------
    Optima
        Per scenario of a workflow × machine: the value gaps are measured against (the realised
        optimum where proven, else its lower bound; None where a worker was lost).
    """
    held = MemoryCache() if cache is None else cache

    def optima(workflow: Workflow, machine: Machine, scenarios: Scenarios) -> list[float | None]:
        jobs = scenario_jobs(workflow, machine, scenarios)
        found = perfect_information(jobs, held, executor=executor, time_limit=time_limit, seed=seed)
        return [found.by_key[job.key].value for job in jobs]

    return optima
