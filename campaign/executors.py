"""The one executor layer: local processes or a Dask cluster, results as they complete.

``peakopt solve`` and ``peakopt stress`` hand their work to :func:`run_items`
with an :class:`Executor` from :func:`open_executor`. Work goes out in chunks
(several items per task, so that a cluster's per-task overhead does not
dominate short items) and comes back as one :class:`ItemOutcome` per item.

Failures never stop a run:

- an exception escaping the item function becomes the item's ``error``;
- a worker that dies (a crash, ``os._exit``, a segfault) or a chunk still
  running past its hard deadline loses its chunk; the lost items are then run
  again one at a time, alone, so that the one that kills or hangs a worker is
  found and gets the error, and the others get their results.

Soft per-call limits inside an item are :func:`peakopt.campaign.limits.time_limit`'s job.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from peakopt.campaign.dask_pool import dask_pool
from peakopt.campaign.limits import describe
from peakopt.campaign.pools import HUNG, Lost, Pool, local_pool, send_to_parent
from peakopt.models import PeakoptError

T = TypeVar("T")
R = TypeVar("R")

#: Seconds added to every hard deadline: pickling, a busy machine.
GRACE = 30.0

#: Seconds a local chunk may wait for its worker to start before its hard limit counts anyway
#: (normally it counts from the moment the worker begins the chunk: start-up is not its time).
STARTUP = 60.0


def solve_deadline(time_limit: float) -> float:
    """Hard limit of one reference solve: its search (time limit) twice over, and a minute to build.

    The time limit bounds the search only; building the model of a 10,000-step
    workflow and checking the result take their own time.
    """
    return 2 * time_limit + 60.0


__all__ = [
    "GRACE",
    "STARTUP",
    "Executor",
    "ExecutorError",
    "ItemOutcome",
    "Where",
    "open_executor",
    "run_items",
    "send_to_parent",
    "solve_deadline",
]


class ExecutorError(PeakoptError):
    """The cluster cannot be reached or started (one ``Error:`` line, as every refused run)."""


@dataclass(frozen=True)
class Where:
    """Where work runs: local processes (default), a new Dask LocalCluster, or a Dask scheduler.

    Parameters
    ----------
    jobs
        Local worker processes; None for the number of cores.
    dask_local
        Start a Dask LocalCluster of this many single-threaded worker processes.
    scheduler
        Address of a running Dask scheduler, e.g. ``tcp://10.0.0.5:8786``.
    """

    jobs: int | None = None
    dask_local: int | None = None
    scheduler: str | None = None

    def __post_init__(self) -> None:
        chosen = [self.jobs is not None, self.dask_local is not None, self.scheduler is not None]
        if sum(chosen) > 1:
            raise ValueError("choose one of jobs, dask_local and scheduler")
        for name in ("jobs", "dask_local"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")

    def at_most(self, items: int) -> Where:
        """The same place with no more local (or LocalCluster) workers than ``items``.

        A running cluster (``scheduler``) is used as it is.
        """
        if self.scheduler is not None:
            return self
        if self.dask_local is not None:
            return replace(self, dask_local=max(1, min(self.dask_local, items)))
        return replace(self, jobs=max(1, min(self.jobs or default_jobs(), items)))

    def describe(self) -> str:
        """One line for progress and reports."""
        if self.scheduler is not None:
            return f"Dask scheduler {self.scheduler}"
        if self.dask_local is not None:
            return f"Dask LocalCluster, {self.dask_local} workers"
        return f"{self.jobs or default_jobs()} local processes"


def default_jobs() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class ItemOutcome(Generic[T, R]):
    """What became of one item: its value, or why there is none."""

    item: T
    value: R | None
    error: str | None = None


class Executor:
    """A started pool (see :func:`open_executor`); use it as a context manager."""

    def __init__(self, pool: Pool, where: Where) -> None:
        self.pool = pool
        self.where = where

    @property
    def slots(self) -> int:
        """How many chunks run at once."""
        return self.pool.slots

    def messages(self) -> list[Any]:
        """Everything workers sent with :func:`send_to_parent` since the last call (local processes only)."""
        return self.pool.messages()

    def close(self, now: bool = False) -> None:
        """Stop the workers; ``now`` drops queued work and ends running items."""
        self.pool.close(now)

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        self.close(now=kind is not None)


def open_executor(where: Where) -> Executor:
    """Start local processes, a Dask LocalCluster, or connect to a Dask scheduler.

    Raises
    ------
    ExecutorError
        When the scheduler cannot be reached or the cluster cannot start.
    """
    if where.jobs is not None or (where.dask_local is None and where.scheduler is None):
        return Executor(local_pool(where.jobs or default_jobs()), where)
    try:
        return Executor(dask_pool(where.dask_local, where.scheduler), where)
    except (OSError, TimeoutError, ValueError) as exc:
        target = where.scheduler or "a LocalCluster"
        raise ExecutorError(f"cannot start Dask on {target}: {exc}") from exc


def run_chunk(
    func: Callable[[T], R], chunk: Sequence[T], limits: Sequence[float] | None = None
) -> list[tuple[R | None, str | None]]:
    """Run ``func`` on each item in a worker; an exception becomes that item's error text.

    With ``limits``, an item still running past its limit ends the worker
    process (exit code :data:`HUNG`): a thread stuck in a C call cannot be
    stopped otherwise, and the runner then finds the item by running it alone.
    """
    done: list[tuple[R | None, str | None]] = []
    for k, item in enumerate(chunk):
        with _watchdog(None if limits is None else limits[k]):
            try:
                done.append((func(item), None))
            except Exception as exc:
                done.append((None, describe(exc)))
    return done


@contextmanager
def _watchdog(limit: float | None) -> Iterator[None]:
    if limit is None:
        yield
        return
    # a longer wait than a Timer takes is no limit at all (threading.Timer(1e300) overflows)
    timer = threading.Timer(min(limit, threading.TIMEOUT_MAX), os._exit, (HUNG,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


@dataclass
class _Flight(Generic[T]):
    chunk: list[T]
    limit: float
    due: float
    alone: bool


def run_items(
    executor: Executor,
    func: Callable[[T], R],
    items: Sequence[T],
    *,
    chunk: int = 1,
    deadline: Callable[[T], float],
    grace: float = GRACE,
    startup: float = STARTUP,
    tick: Callable[[], None] | None = None,
) -> Iterator[ItemOutcome[T, R]]:
    """Run ``func`` on every item; yield each :class:`ItemOutcome` as its chunk completes.

    Parameters
    ----------
    executor
        From :func:`open_executor`.
    func
        A module-level function (it is pickled to the workers).
    items
        The work; each item is pickled with its chunk.
    chunk
        Items per task.
    deadline
        Hard limit of one item in seconds: past it, the worker ends itself
        (see :func:`run_chunk`); should even that fail, a chunk running
        longer than its items' limits plus ``grace`` has its worker stopped.
        A local chunk's time counts from when its worker begins it (a Dask
        chunk's from its submission), never the worker's start-up.
    grace
        Seconds added to every hard limit (pickling, a busy machine).
    startup
        Local processes: seconds a chunk may wait for its worker to begin it,
        after which its hard limit counts all the same.
    tick
        Called about five times a second while waiting (e.g. to show workers' messages).
    """
    queue: deque[list[T]] = deque(list(items[i : i + chunk]) for i in range(0, len(items), chunk))
    alone: deque[T] = deque()
    flying: dict[Any, _Flight[T]] = {}
    pool = executor.pool
    while queue or alone or flying:
        _launch(pool, func, queue, alone, flying, deadline, grace, startup if pool.announces else 0.0)
        finished = pool.wait(list(flying), 0.2)
        for handle in pool.started():
            if handle in flying:
                flying[handle].due = time.monotonic() + flying[handle].limit
        if tick is not None:
            tick()
        for handle in finished:
            flight = flying.pop(handle)
            try:
                values = pool.result(handle)
            except Lost as exc:
                yield from _lost(flight, str(exc), alone)
                continue
            for item, (value, error) in zip(flight.chunk, values, strict=True):
                yield ItemOutcome(item, value, error)
        now = time.monotonic()
        overdue = [h for h, f in flying.items() if f.due < now]
        if overdue:
            for handle in pool.stop(overdue, list(flying)):
                flight = flying.pop(handle)
                why = f"no result within the hard limit of {flight.limit:g} s; its worker was stopped"
                yield from _lost(
                    flight, why if handle in overdue else "stopped beside a worker that hung", alone
                )


def _launch(
    pool: Pool,
    func: Callable[[T], R],
    queue: deque[list[T]],
    alone: deque[T],
    flying: dict[Any, _Flight[T]],
    deadline: Callable[[T], float],
    grace: float,
    wait: float,
) -> None:
    """Keep every slot busy; items under suspicion run one at a time with nothing beside them.

    A chunk is due ``wait`` seconds after its limit, until its start is seen (local processes).
    """
    batches: list[tuple[list[T], bool]] = []
    if alone or any(f.alone for f in flying.values()):
        if not flying:
            batches.append(([alone.popleft()], True))
    else:
        while queue and len(flying) + len(batches) < pool.slots * pool.depth:
            batches.append((queue.popleft(), False))
    for batch, single in batches:
        limits = [deadline(item) for item in batch]
        limit = sum(limits) + grace
        handle = pool.submit(run_chunk, func, batch, limits)
        flying[handle] = _Flight(batch, limit, time.monotonic() + limit + wait, single)


def _lost(flight: _Flight[T], why: str, alone: deque[T]) -> Iterator[ItemOutcome[T, Any]]:
    """A lost chunk: an item that was alone is the culprit; others are run again alone."""
    if flight.alone:
        yield ItemOutcome(flight.chunk[0], None, f"worker lost: {why}")
    else:
        alone.extend(flight.chunk)
