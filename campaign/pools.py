"""Where chunks run: the :class:`Pool` seam, and a local process pool (concurrent.futures).

Every pool — this one, and a Dask cluster (:mod:`peakopt.campaign.dask_pool`) — offers
the same few operations to :func:`peakopt.campaign.executors.run_items`: submit a chunk,
wait for some to finish, take a result (or learn that the chunk was lost with its
worker), stop the workers of overdue chunks.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import signal
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from multiprocessing.queues import Queue
from queue import Empty
from typing import Any

#: Exit code of a worker that ended itself at an item's hard limit.
HUNG = 86

#: Set in each local worker process: where :func:`send_to_parent` sends messages.
_QUEUE: Queue[Any] | None = None

#: Set in each local worker process: where a chunk says that it starts (see :func:`_announced`).
_STARTS: Any = None

#: Seconds a stopped pool's manager thread gets to end (it ends as soon as it sees its workers gone).
TERMINATE_WAIT = 10.0

#: Slots of the shared array chunks mark their start in (more than chunks ever in flight).
START_SLOTS = 4096


class Lost(Exception):
    """A chunk's worker died or was stopped before the chunk finished."""


def send_to_parent(message: Any) -> None:
    """Send ``message`` from a worker to the parent (local processes; dropped on Dask)."""
    if _QUEUE is not None:
        _QUEUE.put(message)


#: The signals that stop a run: the parent handles them and stops its workers.
_STOPS = {signal.SIGINT, signal.SIGTERM}

#: Linux's prctl option that sends a signal to a process when its parent dies.
_PR_SET_PDEATHSIG = 1


def _worker_init(queue: Queue[Any], starts: Any, parent: int) -> None:
    """Local workers leave Ctrl-C to the parent, and end when the parent ends, however it ends.

    The parent forks them with these signals blocked (see
    :func:`_quiet_children`): a Ctrl-C before this point would otherwise
    print a worker's traceback.
    """
    global _QUEUE, _STARTS
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's own handler is not for workers
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
    _die_with(parent)
    # progress messages are best effort: a worker never waits at exit to flush them
    queue.cancel_join_thread()
    _QUEUE, _STARTS = queue, starts


def _announced(token: int, func: Callable[..., Any], *args: Any) -> Any:
    """In a local worker: say that the chunk starts, then run it.

    Its hard limit counts from here: a pool's workers start on demand (and anew after a
    worker died), and their start-up on a busy machine is no part of the chunk's time.
    The mark is one aligned integer in shared memory, written without a lock: a worker
    killed at any moment (a hang ended, a crash) leaves no lock held that would block the
    others, as a queue's write lock would.
    """
    if _STARTS is not None:
        _STARTS[token % START_SLOTS] = token + 1
    return func(*args)


def _die_with(parent: int) -> None:
    """End this process when ``parent`` dies, even by ``kill -9`` or the OOM killer.

    An orphaned pool worker would otherwise wait for work forever: its
    siblings hold the queue open. On Linux the kernel sends SIGKILL
    (``PR_SET_PDEATHSIG``); elsewhere a thread watches the parent's pid.
    """
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    else:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # it died before the prctl: no signal will come
        os._exit(1)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


@contextlib.contextmanager
def _quiet_children() -> Iterator[None]:
    """Fork with SIGINT and SIGTERM blocked: children inherit the mask until :func:`_worker_init`.

    A signal that arrives meanwhile waits, and reaches the parent just after.
    """
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class Pool(ABC):
    """The operations a runner needs from an executor."""

    #: Chunks in flight per slot: more than one hides the round trip to a remote worker.
    depth = 1

    #: Whether :meth:`started` says when chunks begin on a worker (else their hard
    #: limits count from submission: a cluster's workers are up before work is sent).
    announces = False

    @property
    @abstractmethod
    def slots(self) -> int:
        """How many chunks run at once."""

    @abstractmethod
    def submit(self, func: Callable[..., Any], *args: Any) -> Any:
        """Start ``func(*args)`` on a worker; return a handle."""

    @abstractmethod
    def wait(self, handles: list[Any], timeout: float) -> list[Any]:
        """The handles that are done, waiting at most ``timeout`` seconds for the first."""

    @abstractmethod
    def result(self, handle: Any) -> Any:
        """The value of a finished handle; :class:`Lost` if its worker was lost."""

    @abstractmethod
    def stop(self, overdue: list[Any], flying: list[Any]) -> list[Any]:
        """Stop the workers running ``overdue``; return every handle lost with them."""

    def messages(self) -> list[Any]:
        """Messages sent with :func:`send_to_parent` since the last call."""
        return []

    def started(self) -> list[Any]:
        """Handles whose chunk began on a worker since the last call (see :attr:`announces`)."""
        return []

    @abstractmethod
    def close(self, now: bool) -> None:
        """Shut down; ``now`` drops queued work and ends running work."""


class LocalPool(Pool):
    """``jobs`` worker processes of a :class:`~concurrent.futures.ProcessPoolExecutor`."""

    announces = True

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.queue: Queue[Any] | None = None
        self.starts: Any = get_context().RawArray("q", START_SLOTS)
        self.tokens: dict[int, Future[Any]] = {}
        self.count = itertools.count()
        self.pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        self.workers: dict[int, Any] = {}
        # A new queue with every pool: a worker killed while it sent a message (a hang
        # ended, a crash) may leave the old queue's write lock held for good.
        if self.queue is not None:
            self.queue.close()
        self.queue = get_context().Queue()
        return ProcessPoolExecutor(
            max_workers=self.jobs,
            initializer=_worker_init,
            initargs=(self.queue, self.starts, os.getpid()),
        )

    @property
    def slots(self) -> int:
        """One chunk per process: a chunk starts when submitted, so its deadline is fair."""
        return self.jobs

    def submit(self, func: Callable[..., Any], *args: Any) -> Future[Any]:
        """Submit to the pool, replacing it first if a dead worker broke it."""
        token = next(self.count)
        # a submit may fork the workers
        with _quiet_children():
            try:
                future = self.pool.submit(_announced, token, func, *args)
            except BrokenProcessPool:
                self.pool.shutdown(wait=False, cancel_futures=True)
                self.pool = self._new_pool()
                future = self.pool.submit(_announced, token, func, *args)
        # the pool forgets its processes when it breaks: keep them to read their exit codes
        self.workers.update(getattr(self.pool, "_processes", None) or {})
        self.tokens[token] = future
        return future

    def started(self) -> list[Any]:
        """The futures whose chunk a worker began since the last call."""
        found = []
        for token, future in list(self.tokens.items()):
            if self.starts[token % START_SLOTS] == token + 1 or future.done():
                del self.tokens[token]  # a chunk lost before it began is done too: forget it
                found.append(future)
        return found

    def wait(self, handles: list[Any], timeout: float) -> list[Any]:
        """Futures done within ``timeout``."""
        if not handles:
            return []
        done, _ = wait(handles, timeout=timeout, return_when=FIRST_COMPLETED)
        return list(done)

    def result(self, handle: Any) -> Any:
        """The chunk's results; a broken pool means a worker died (or ended itself at a hard limit)."""
        try:
            return handle.result()
        except BrokenProcessPool:
            if HUNG in self._exit_codes():
                raise Lost("a worker ran past an item's hard limit and was ended") from None
            raise Lost("a worker process died") from None

    def _exit_codes(self, wait: float = 5.0) -> set[int | None]:
        """The exit codes of the broken pool's workers, once known (at most ``wait`` seconds).

        The pool fails its futures first and reaps its workers after, in its own thread;
        a code read meanwhile can be None even for a worker that is gone (the reaping
        thread's ``waitpid`` took it), so that a hang would pass for a crash.
        """
        end = time.monotonic() + wait
        while True:
            codes = {process.exitcode for process in self.workers.values()}
            if HUNG in codes or None not in codes or time.monotonic() > end:
                return codes
            time.sleep(0.01)

    def stop(self, overdue: list[Any], flying: list[Any]) -> list[Any]:
        """A pool cannot stop one task: end every worker and start a new pool."""
        self._terminate()
        self.pool = self._new_pool()
        return flying

    def _terminate(self) -> None:
        processes = list(getattr(self.pool, "_processes", {}).values())
        manager = getattr(self.pool, "_executor_manager_thread", None)
        self.pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        # The manager thread closes its wake-up pipe as it ends; CPython 3.11's exit hook
        # writes to that pipe unlocked, so a thread still ending at exit races it
        # ("Exception ignored ... Bad file descriptor" after a Ctrl-C). Its workers are
        # gone, so it ends at once.
        if manager is not None:
            manager.join(timeout=TERMINATE_WAIT)

    def messages(self) -> list[Any]:
        """Drain the queue the workers report to."""
        found = []
        while self.queue is not None:
            try:
                found.append(self.queue.get_nowait())
            except (Empty, OSError, ValueError):  # drained, or closed with the pool it served
                break
        return found

    def close(self, now: bool) -> None:
        """Wait for the workers to finish, or end them now."""
        if now:
            self._terminate()
        else:
            self.pool.shutdown()
        if self.queue is not None:
            self.queue.close()


def local_pool(jobs: int) -> LocalPool:
    """``jobs`` local worker processes."""
    return LocalPool(jobs)
