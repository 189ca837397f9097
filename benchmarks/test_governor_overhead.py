"""The governor's admission overhead per call: uncontended, and with many calls waiting at once.

Each case runs real calls through a :class:`~peakopt.runtime.governor.Governor` (no sleep in the
calls, so the time is the governor's and asyncio's) and prints microseconds per call beside an
``asyncio.Semaphore`` of the same count (what a count cap costs). After the timing, the trace
is checked by the oracle: every call ran, and never over the capacity.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from peakopt.models import Machine
from peakopt.oracle import evaluate
from peakopt.runtime.governor import Governor

MACHINE = Machine(name="bench", capacity={"memory_mb": 1000.0, "cpu": 4.0})


def safe(governor: Governor, calls: int) -> bool:
    trace = governor.trace()
    workflow, schedule = trace.realised()
    return len(trace.ran) == calls and evaluate(workflow, MACHINE, schedule).safe


def test_uncontended_calls() -> None:
    calls = 5000
    governor = Governor(MACHINE)
    began = time.perf_counter()
    for _ in range(calls):
        governor.release(governor.acquire_blocking("c", demand={"memory_mb": 10}))
    blocking = (time.perf_counter() - began) / calls

    async def main() -> float:
        began = time.perf_counter()
        for _ in range(calls):
            async with governor.admit("c", demand={"memory_mb": 10}):
                pass
        return (time.perf_counter() - began) / calls

    admit = asyncio.run(main())
    print(
        f"\nuncontended: acquire_blocking + release {blocking * 1e6:.0f} us, async admit {admit * 1e6:.0f} us"
    )
    assert safe(governor, 2 * calls)


@pytest.mark.parametrize("waiting", [10, 100, 1000])
def test_calls_waiting_at_once(waiting: int) -> None:
    governor = Governor(MACHINE)

    async def one() -> None:
        async with governor.admit("c", demand={"memory_mb": 100}):  # 10 fit at a time
            await asyncio.sleep(0)

    async def count_capped(semaphore: asyncio.Semaphore) -> None:
        async with semaphore:
            await asyncio.sleep(0)

    async def main() -> tuple[float, float]:
        began = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(waiting)))
        governed = (time.perf_counter() - began) / waiting
        semaphore = asyncio.Semaphore(10)
        began = time.perf_counter()
        await asyncio.gather(*(count_capped(semaphore) for _ in range(waiting)))
        return governed, (time.perf_counter() - began) / waiting

    governed, capped = asyncio.run(main())
    print(
        f"\n{waiting} calls at once: governor {governed * 1e6:.0f} us/call, "
        f"Semaphore(10) {capped * 1e6:.0f} us/call"
    )
    assert safe(governor, waiting)
