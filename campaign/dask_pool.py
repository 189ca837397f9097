"""Where chunks run on a Dask cluster: a new LocalCluster, or the workers of a running scheduler.

A :class:`~peakopt.campaign.pools.Pool` like the local one: Dask itself is imported only when
a cluster is started.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from peakopt.campaign.pools import Lost, Pool


def dask_setup(worker: Any) -> None:
    """Dask preload of LocalCluster workers (restarted ones too): Ctrl-C is the parent's to handle.

    A worker that took Ctrl-C itself would shut down noisily while the
    parent is stopping the cluster anyway.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


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


def dask_pool(workers: int | None, address: str | None) -> DaskPool:
    """A new LocalCluster of ``workers`` processes, or the scheduler at ``address``."""
    return DaskPool(workers, address)
