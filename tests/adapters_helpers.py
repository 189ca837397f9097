"""Helpers of the adapter tests: tool bodies that hold real memory a while, the oracle on a governor."""

from __future__ import annotations

import asyncio
import threading
import time

from peakopt.models import Machine
from peakopt.oracle import evaluate
from peakopt.runtime.governor import Governor

#: The machine of the adapter tests: memory for three 20 MiB calls at once, not four.
BOX = Machine(name="box", capacity={"memory_mb": 64.0})
HOLD = 0.05


class Peak:
    """How many tool bodies run at once, at most (counted by the bodies themselves)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1


def allocate(mb: int) -> bytearray:
    """``mb`` MiB, every page written (resident, not a lazy zero mapping)."""
    return bytearray(b"\x01") * (mb << 20)


def hold_sync(mb: int, peak: Peak, tag: str) -> str:
    peak.enter()
    try:
        block = allocate(mb)
        time.sleep(HOLD)
        return f"{tag}:{len(block) >> 20}MiB"
    finally:
        peak.leave()


async def hold_async(mb: int, peak: Peak, tag: str) -> str:
    peak.enter()
    try:
        block = allocate(mb)
        await asyncio.sleep(HOLD)
        return f"{tag}:{len(block) >> 20}MiB"
    finally:
        peak.leave()


def safe_and_complete(governor: Governor, calls: int) -> None:
    """The governor's trace holds ``calls`` calls, every one released, and the oracle judges it safe."""
    trace = governor.trace()
    assert len(trace.steps) == calls
    assert all(s.start is not None and s.end is not None for s in trace.steps)
    workflow, schedule = trace.realised()
    score = evaluate(workflow, trace.machine, schedule)
    assert score.valid and score.safe, score
    status = governor.status()
    assert status.running == () and status.waiting == ()
    assert status.admitted == status.released == calls
