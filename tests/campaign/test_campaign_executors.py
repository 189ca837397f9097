"""The executor layer: results as they complete, and every failure an error outcome, not a stop."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from peakopt.campaign import pools
from peakopt.campaign.executors import Where, open_executor, run_items
from peakopt.campaign.limits import ItemTimeout, time_limit


def work(x: int) -> int:
    """Square, except for the numbers that fail in every way a task can."""
    if x == 3:
        raise ValueError("three is wrong")
    if x == 5:
        with time_limit(0.3):
            while True:
                pass
    if x == 7:
        os._exit(3)
    if x == 9:
        with time_limit(0.3):
            time.sleep(60)
    return x * x


def deaf(x: int) -> int:
    """Hangs where no soft limit reaches (the signal is blocked), unless x is even."""
    import signal

    if x % 2:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        with time_limit(0.2):
            time.sleep(60)
    return x


def outcomes(
    where: Where, func: Callable[[int], int], items: list[int], **kwargs: Any
) -> dict[int, tuple[int | None, str | None]]:
    """Each item's value and error, run by :func:`run_items` (``kwargs``: its options)."""
    with open_executor(where) as executor:
        found = {o.item: (o.value, o.error) for o in run_items(executor, func, items, **kwargs)}
    assert sorted(found) == items  # one outcome per item, none lost, none twice
    return found


def check(found: Mapping[int, tuple[object, object]]) -> None:
    for x, (value, error) in found.items():
        if x in (3, 5, 7, 9):
            assert value is None and isinstance(error, str)
        else:
            assert (value, error) == (x * x, None)
    assert found[3][1] == "ValueError: three is wrong"
    assert "0.3 s limit" in str(found[5][1])
    assert str(found[7][1]).startswith("worker lost")


@pytest.mark.slow
def test_local_processes_turn_raises_hangs_and_crashes_into_errors() -> None:
    found = outcomes(Where(jobs=2), work, list(range(12)), chunk=3, deadline=lambda _: 5.0)
    check(found)
    assert found[7][1] == "worker lost: a worker process died"
    assert found[9][1] == "still running after the 0.3 s limit"  # a signal interrupts the sleep


@pytest.mark.slow
def test_a_hang_past_the_hard_limit_stops_its_worker_and_spares_the_others() -> None:
    # the worker's own watchdog must end the hang at the 0.5 s limit (counted from the item's start);
    # the grace is only the parent's backstop should the watchdog fail, so it may be generous
    found = outcomes(Where(jobs=2), deaf, list(range(6)), chunk=2, deadline=lambda _: 0.5, grace=10.0)
    for x, (value, error) in found.items():
        if x % 2:
            assert value is None and "ran past an item's hard limit" in str(error)
        else:
            assert (value, error) == (x, None)


_INIT = pools._worker_init


def slow_start(*args: object) -> None:
    """A worker that takes 1.5 s to start, as on a loaded machine."""
    time.sleep(1.5)
    _INIT(*args)  # type: ignore[arg-type]


@pytest.mark.slow
def test_a_deadline_does_not_count_the_workers_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pools, "_worker_init", slow_start)
    # start-up (1.5 s) is longer than each item's limit and grace (1 s): they still finish
    found = outcomes(Where(jobs=2), deaf, [0, 2, 4], chunk=1, deadline=lambda _: 0.5, grace=0.5)
    assert found == {0: (0, None), 2: (2, None), 4: (4, None)}


@pytest.mark.slow
def test_a_worker_that_never_starts_is_stopped_after_the_startup_allowance(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pools, "_worker_init", slow_start)
    found = outcomes(Where(jobs=1), deaf, [0], deadline=lambda _: 0.1, grace=0.1, startup=0.3)
    assert found[0][0] is None
    assert "no result within the hard limit of 0.2 s; its worker was stopped" in str(found[0][1])


@pytest.mark.slow
def test_dask_local_cluster_runs_and_survives_failures() -> None:
    # Dask runs tasks in threads: no signal reaches a sleep there, only the hard limit does
    limits = lambda x: 1.0 if x == 9 else 10.0  # noqa: E731
    found = outcomes(Where(dask_local=2), work, list(range(12)), chunk=1, deadline=limits, grace=1.0)
    check(found)
    assert found[7][1] == "worker lost: its Dask worker died"
    # its worker ended itself at the 1 s limit (or the runner ended it at 2 s): either way, lost
    assert str(found[9][1]).startswith("worker lost: ")


def test_soft_limit_in_a_thread_stops_python_code() -> None:
    caught: list[BaseException] = []

    def spin() -> None:
        try:
            with time_limit(0.2):
                while True:
                    pass
        except ItemTimeout as exc:
            caught.append(exc)

    thread = threading.Thread(target=spin)
    thread.start()
    thread.join(10)
    assert not thread.is_alive()
    assert [str(e) for e in caught] == ["still running after the 0.2 s limit"]


def test_no_limit_and_finished_blocks_never_raise_later() -> None:
    with time_limit(None):
        pass
    with time_limit(0.05):
        pass
    time.sleep(0.1)  # the timer was cancelled: nothing fires now


@pytest.mark.parametrize(
    "kwargs",
    [{"jobs": 0}, {"dask_local": 0}, {"jobs": 2, "dask_local": 2}, {"jobs": 1, "scheduler": "tcp://x:1"}],
)
def test_where_rejects_bad_combinations(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Where(**kwargs)  # type: ignore[arg-type]


def test_a_limit_longer_than_a_timer_takes_is_no_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from peakopt.campaign.executors import run_chunk

    # threading.Timer(1e300) dies in its thread with an OverflowError: such a limit only means "never"
    crashed: list[object] = []
    monkeypatch.setattr(threading, "excepthook", crashed.append)

    def slow_abs(x: int) -> int:
        time.sleep(0.2)
        return abs(x)

    assert run_chunk(slow_abs, [-3], [1e300]) == [(3, None)]
    assert crashed == []


@pytest.mark.parametrize(
    ("where", "items", "expected"),
    [
        (Where(jobs=8), 3, Where(jobs=3)),
        (Where(jobs=2), 5, Where(jobs=2)),
        (Where(dask_local=4), 1, Where(dask_local=1)),
        (Where(jobs=4), 0, Where(jobs=1)),
        (Where(scheduler="tcp://x:1"), 1, Where(scheduler="tcp://x:1")),
    ],
)
def test_no_more_workers_than_items(where: Where, items: int, expected: Where) -> None:
    assert where.at_most(items) == expected


@pytest.mark.parametrize("in_thread", [False, True], ids=["main thread", "other thread"])
def test_a_soft_limit_longer_than_a_timer_takes_is_no_limit(in_thread: bool) -> None:
    caught: list[BaseException] = []

    def block() -> None:
        try:
            with time_limit(1e300):  # setitimer(1e300) and Timer(1e300) both overflow
                time.sleep(0.05)
        except BaseException as exc:
            caught.append(exc)

    if in_thread:
        thread = threading.Thread(target=block)
        thread.start()
        thread.join()
    else:
        block()
    assert caught == []


def chatty(x: int) -> int:
    """Reports to the parent; 7 dies first (it may take the queue's write lock with it)."""
    if x == 7:  # dies while it sends: it holds the queue's write lock, as a worker killed mid-send would
        assert pools._QUEUE is not None
        pools._QUEUE._wlock.acquire()  # type: ignore[attr-defined]
        os._exit(3)
    time.sleep(0.3)  # leave the dying worker time to break the pool first
    pools.send_to_parent(("alive", x))
    return x


@pytest.mark.slow
def test_workers_still_report_after_a_worker_died() -> None:
    with open_executor(Where(jobs=2)) as executor:
        found = {o.item: o.error for o in run_items(executor, chatty, [7, 1, 2, 3], deadline=lambda _: 30.0)}
        time.sleep(0.5)  # the last messages travel through the queue's feeder thread
        said = {m for m in executor.messages() if m[0] == "alive"}
    assert str(found[7]).startswith("worker lost") and found[1] is found[2] is found[3] is None
    assert {("alive", 3)} <= said  # a worker of the new pool reports through the new queue


def test_an_unreachable_cluster_is_a_peakopt_error() -> None:
    # the CLI turns every PeakoptError into one Error: line; a cluster fault must be one too
    from peakopt.campaign.executors import ExecutorError, Where, open_executor
    from peakopt.models import PeakoptError

    assert issubclass(ExecutorError, PeakoptError)
    with pytest.raises(PeakoptError, match="cannot start Dask"):
        open_executor(Where(scheduler="tcp://127.0.0.1:9"))


def sleepy(x: int) -> int:
    time.sleep(30)
    return x


@pytest.mark.parametrize("stopped", ["closed now", "overdue"])
def test_a_stopped_pool_leaves_no_manager_thread_for_the_exit_hook(stopped: str) -> None:
    # CPython 3.11's exit hook writes to each pool's wake-up pipe while the pool's own
    # manager thread may be closing it: "Exception ignored ... Bad file descriptor"
    # after a Ctrl-C. A stopped pool's manager thread has ended, its pipe closed.
    pool = pools.LocalPool(2)
    handles = [pool.submit(sleepy, k) for k in range(2)]
    wait_until = time.monotonic() + 30
    while len(pool.started()) < 2 and time.monotonic() < wait_until:
        time.sleep(0.05)
    old = pool.pool
    manager = old._executor_manager_thread
    wakeup = old._executor_manager_thread_wakeup
    if stopped == "closed now":
        pool.close(now=True)
    else:
        assert pool.stop(handles[:1], handles) == handles
        pool.close(now=True)
    # typeshed gives the manager thread the wake-up's type: check that it is a thread
    assert isinstance(manager, threading.Thread) and not manager.is_alive()
    assert wakeup._closed
