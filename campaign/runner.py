"""The one runner of ``peakopt solve`` and ``peakopt stress``: items on an executor, written as they arrive.

A client says what its items are (:class:`Work`): the function a worker runs on
one, its hard limit, the result of an item that gave none, and how to split an
item lost with its worker. :func:`run_work` then runs them on an executor (local
processes or Dask, see :mod:`peakopt.campaign.executors`), writes each result
the moment it arrives — to a reference store, a results store — reports
progress, and yields the result. A run killed at any moment has written every
result that arrived; a resumed run is given the items its store does not hold
yet (see :meth:`peakopt.campaign.references.References.has` and
:func:`peakopt.campaign.stress.backlog`).

Failures never stop a run: an item whose function raised, whose worker died or
hung past its hard limit, gets the result :attr:`Work.failed` makes of the
reason. An item of several parts (a stress item's methods) lost with its worker
is first split and its parts run again one at a time, so that only the guilty
part fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from peakopt.campaign.executors import Executor, ItemOutcome, run_items

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Work(Generic[T, R]):
    """What a runner runs, and what it makes of an item that gives nothing.

    Attributes
    ----------
    run
        The function a worker runs on one item: a module-level function of
        :mod:`peakopt.campaign` (it is pickled to the workers, which must not
        import the command line).
    deadline
        The hard limit of one item in seconds.
    failed
        The result of an item that gave none, from the item and the reason.
    split
        The parts of an item, each an item, run again one at a time when the whole
        was lost with its worker; None when an item is one part.
    """

    run: Callable[[T], R]
    deadline: Callable[[T], float]
    failed: Callable[[T, str], R]
    split: Callable[[T], Sequence[T]] | None = None

    def result(self, outcome: ItemOutcome[T, R]) -> R:
        """The outcome's value, or the item's failed result."""
        if outcome.value is not None:
            return outcome.value
        return self.failed(outcome.item, outcome.error or "no result")


def run_work(
    executor: Executor,
    work: Work[T, R],
    items: Sequence[T],
    write: Callable[[T, R], None] | None = None,
    *,
    chunk: int = 1,
    progress: Callable[[T, R], None] | None = None,
    messages: Callable[[list[Any]], None] | None = None,
) -> Iterator[R]:
    """Run every item; write each result as it arrives, report it, and yield it.

    Parameters
    ----------
    executor
        From :func:`~peakopt.campaign.executors.open_executor`.
    work
        The items' function, hard limit, failed result and split.
    items
        What to run (a resumed run: only what its store does not hold yet).
    write
        Keeps one result (in a store, a file) before the next one is taken; None
        when the caller keeps them itself.
    chunk
        Items per task (a cluster's per-task overhead then does not dominate short items).
    progress
        Called with each item and its result once written.
    messages
        Called about five times a second with what workers sent meanwhile
        (:func:`~peakopt.campaign.pools.send_to_parent`; local processes only).
    """
    tick = None if messages is None else (lambda: messages(executor.messages()))
    retry: list[T] = []
    for outcome in run_items(executor, work.run, items, chunk=chunk, deadline=work.deadline, tick=tick):
        parts = work.split(outcome.item) if outcome.value is None and work.split is not None else ()
        if len(parts) > 1:
            retry.extend(parts)
            continue
        yield _keep(work, outcome, write, progress)
    for outcome in run_items(executor, work.run, retry, chunk=1, deadline=work.deadline, tick=tick):
        yield _keep(work, outcome, write, progress)


def _keep(
    work: Work[T, R],
    outcome: ItemOutcome[T, R],
    write: Callable[[T, R], None] | None,
    progress: Callable[[T, R], None] | None,
) -> R:
    result = work.result(outcome)
    if write is not None:
        write(outcome.item, result)
    if progress is not None:
        progress(outcome.item, result)
    return result
