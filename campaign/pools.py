"""Where chunks run: a local process pool (concurrent.futures) or a Dask cluster (distributed).

Both offer the same few operations to :func:`peakopt.campaign.executors.run_items`:
submit a chunk, wait for some to finish, take a result (or learn that the
chunk was lost with its worker), stop the workers of overdue chunks.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import logging
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

#: Set in each local worker process: where :func:`report` sends messages.
_QUEUE: Queue[Any] | None = None

#: Set in each local worker process: where a chunk says that it starts (see :func:`_announced`).
_STARTS: Any = None

#: Slots of the shared array chunks mark their start in (more than chunks ever in flight).
START_SLOTS = 4096


class Lost(Exception):
    """A chunk's worker died or was stopped before the chunk finished."""


def report(message: Any) -> None:
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


def dask_setup(worker: Any) -> None:
    """Dask preload of LocalCluster workers (restarted ones too): Ctrl-C is the parent's to handle.

    A worker that took Ctrl-C itself would shut down noisily while the
    parent is stopping the cluster anyway.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


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
        """Messages sent with :func:`report` since the last call."""
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
        self.pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()

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


class DaskPool(Pool):
    """A Dask distributed client: on a new LocalCluster, or connected to a scheduler."""

    depth = 2

    def __init__(self, workers: int | None, address: str | None) -> None:
        import dask
        import distributed

        # distributed is only partly typed: hold its objects as Any
        dist: Any = distributed
        self.cluster: Any = None
        self.client: Any
        if address is not None:
            self.client = dist.Client(address, timeout=dask.config.get("distributed.comm.timeouts.connect"))
        else:
            # a chunk that kills its worker is not retried on another: it is lost at once;
            # the statistical profiler (a sample every 10 ms) costs the workers time for nothing here
            # the preload keeps Ctrl-C away from every worker, restarted ones too
            settings = {
                "distributed.scheduler.allowed-failures": 0,
                "distributed.worker.profile.enabled": False,
                "distributed.worker.preload": [__name__],
            }
            with dask.config.set(settings), _ignoring_ctrl_c():
                self.cluster = dist.LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    silence_logs=logging.CRITICAL,
                )
            self.client = dist.Client(self.cluster)
        self._slots = (0, 0.0)

    @property
    def slots(self) -> int:
        """Worker threads in the cluster (asked again every few seconds: clusters grow and shrink)."""
        count, when = self._slots
        if time.monotonic() - when > 5.0:
            count = max(1, sum(self.client.nthreads().values()))
            self._slots = (count, time.monotonic())
        return count

    def submit(self, func: Callable[..., Any], *args: Any) -> Any:
        """Submit one task (never deduplicated: the same chunk may be run again)."""
        return self.client.submit(func, *args, pure=False)

    def wait(self, handles: list[Any], timeout: float) -> list[Any]:
        """Futures done within ``timeout``."""
        import distributed

        dask_wait: Any = distributed.wait
        if not handles:
            return []
        try:
            done, _ = dask_wait(handles, timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            return []
        return list(done)

    def result(self, handle: Any) -> Any:
        """The chunk's results; a killed worker or a cancelled task is :class:`Lost`."""
        if handle.status == "cancelled":
            raise Lost("the task was cancelled")
        try:
            return handle.result()
        except Exception as exc:  # KilledWorker, CommClosedError...: the worker went away
            if type(exc).__name__ == "KilledWorker":
                raise Lost("its Dask worker died") from None
            raise Lost(f"{type(exc).__name__}: {exc}") from None

    def stop(self, overdue: list[Any], flying: list[Any]) -> list[Any]:
        """Cancel the overdue tasks and end the worker processes running them.

        A thread stuck in a C call cannot be stopped, only its process; a
        worker with a nanny (every LocalCluster worker, ``dask worker`` by
        default) is then started again.
        """
        keys = [h.key for h in overdue]
        workers = self.client.run_on_scheduler(_processing_on, keys=keys)
        self.client.cancel(overdue)
        if workers:
            with contextlib.suppress(OSError):  # CommClosedError: it went away on its own meanwhile
                self.client.run(_exit_worker, workers=workers)
            self._await_gone(set(workers))
        return overdue

    def _await_gone(self, workers: set[str], timeout: float = 15.0) -> None:
        """Wait until the scheduler has seen the workers go: work sent to them now would be lost too."""
        end = time.monotonic() + timeout
        while time.monotonic() < end and workers & set(self.client.scheduler_info()["workers"]):
            time.sleep(0.1)

    def close(self, now: bool) -> None:
        """Close the client (and the LocalCluster it started)."""
        if now:
            self.client.cancel(list(self.client.futures.values()))
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


@contextlib.contextmanager
def _ignoring_ctrl_c() -> Iterator[None]:
    """Ignore SIGINT while the LocalCluster starts: its processes inherit that (exec keeps it).

    A Ctrl-C during those seconds is lost; one during the run reaches the
    parent alone, which stops the cluster.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _processing_on(dask_scheduler: Any, keys: list[Any]) -> list[str]:
    """On the scheduler: the workers running these tasks."""
    found = []
    for key in keys:
        task = dask_scheduler.tasks.get(key)
        if task is not None and task.processing_on is not None:
            found.append(task.processing_on.address)
    return sorted(set(found))


def _exit_worker() -> None:
    """On a worker: end its process right after answering (its nanny starts a new one)."""
    threading.Timer(0.1, os._exit, (1,)).start()


def local_pool(jobs: int) -> LocalPool:
    """``jobs`` local worker processes."""
    return LocalPool(jobs)


def dask_pool(workers: int | None, address: str | None) -> DaskPool:
    """A new LocalCluster of ``workers`` processes, or the scheduler at ``address``."""
    return DaskPool(workers, address)
