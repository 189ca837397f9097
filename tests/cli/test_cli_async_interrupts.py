"""A signal during an asyncio command (``peakopt run``) cancels it: every task cleans up, nothing is printed.

A signal raised as an exception inside a task's own code (here: sampling a process tree) is
re-raised by asyncio every time a task awaiting it resumes, out of the event loop's clean-up
too, which left tasks pending and printed their tracebacks after the ``Interrupted`` line.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
from collections.abc import Coroutine, Iterator
from typing import Any

import pytest

from peakopt.cli import group


@pytest.fixture
def installed() -> Iterator[None]:
    saved = {s: signal.getsignal(s) for s in group.SIGNALS}
    group.install()
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


def steps(signum: int, cleaned: list[str]) -> Coroutine[Any, Any, None]:
    """Two steps, each awaiting a watcher task whose Python code is running when the signal lands."""

    sent: list[int] = []

    async def watcher() -> None:
        if not sent:  # one signal: a second one ends the process at once, by design
            sent.append(signum)
            os.kill(os.getpid(), signum)
        while True:
            sum(range(1000))
            await asyncio.sleep(0)

    async def step(name: str) -> None:
        watch = asyncio.create_task(watcher())
        try:
            await asyncio.sleep(30)
        finally:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch
            cleaned.append(name)

    async def main() -> None:
        tasks = [asyncio.create_task(step(n)) for n in "ab"]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    return main()


@pytest.mark.parametrize("signum", group.SIGNALS)
def test_a_signal_in_a_tasks_code_cancels_every_task_and_prints_nothing(
    installed: None, signum: int, capfd: pytest.CaptureFixture[str]
) -> None:
    cleaned: list[str] = []
    with pytest.raises(group.Interrupted) as caught:
        group.run_interruptible(steps(signum, cleaned))
    gc.collect()  # a task left pending would say so when collected
    assert caught.value.signum == signum
    assert sorted(cleaned) == ["a", "b"]
    assert capfd.readouterr().err == ""


def test_a_run_that_ends_returns_its_result_and_restores_the_handlers(installed: None) -> None:
    before = {s: signal.getsignal(s) for s in group.SIGNALS}

    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert group.run_interruptible(answer()) == 42
    assert {s: signal.getsignal(s) for s in group.SIGNALS} == before


def test_without_peakopts_handlers_a_ctrl_c_is_still_a_keyboard_interrupt() -> None:
    cleaned: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        group.run_interruptible(steps(signal.SIGINT, cleaned))
    assert sorted(cleaned) == ["a", "b"]
