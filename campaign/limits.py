"""A soft time limit around one call, in whatever thread or process runs it.

In a process's main thread (local worker processes) a ``SIGALRM`` timer
raises :class:`ItemTimeout` in the call, interrupting both Python loops and
blocking sleeps. In any other thread (a Dask worker runs tasks in threads)
the exception is raised asynchronously in the running thread, which stops
Python code but not a C call that never returns; the executor's hard limit
(:mod:`peakopt.campaign.executors`) covers that case by stopping the worker.
"""

from __future__ import annotations

import ctypes
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class ItemTimeout(Exception):
    """A call ran past its soft time limit."""


def describe(exc: BaseException) -> str:
    """``Type: message`` on one line; a timeout's message alone."""
    message = " ".join(str(exc).split())
    if isinstance(exc, ItemTimeout):
        return message
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _seconds(limit: float) -> str:
    return f"{limit:g} s"


@contextmanager
def time_limit(limit: float | None) -> Iterator[None]:
    """Raise :class:`ItemTimeout` in the block if it runs longer than ``limit`` seconds.

    Parameters
    ----------
    limit
        Seconds; None for no limit.
    """
    if limit is None:
        yield
        return
    # a longer wait is no limit at all, and timers refuse it (setitimer(1e300) overflows)
    limit = min(limit, threading.TIMEOUT_MAX)
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        with _alarm(limit):
            yield
    else:
        with _async_raise(limit):
            yield


@contextmanager
def _alarm(limit: float) -> Iterator[None]:
    def expire(signum: int, frame: FrameType | None) -> None:
        raise ItemTimeout(f"still running after the {_seconds(limit)} limit")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def _async_raise(limit: float) -> Iterator[None]:
    target = threading.get_ident()
    lock = threading.Lock()
    finished = False

    def expire() -> None:
        with lock:  # never raise into the thread once it has left the block
            if not finished:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(target), ctypes.py_object(ItemTimeout)
                )

    timer = threading.Timer(limit, expire)
    timer.daemon = True
    timer.start()
    try:
        yield
    except ItemTimeout:
        # the asynchronous exception carries no message: say which limit it was
        raise ItemTimeout(f"still running after the {_seconds(limit)} limit") from None
    finally:
        with lock:
            finished = True
        timer.cancel()
