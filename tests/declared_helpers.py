"""Helpers of the declared-workflow tests: a fake clock that asyncio calls sleep on, random workflows."""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from peakopt.models import Machine, Task, Workflow
from peakopt.runtime.governor import Governor

MACHINE = Machine(name="box", capacity={"memory_mb": 1000.0, "cpu": 2.0})


class FakeTime:
    """A clock that moves only when every task waits: to the next sleeper's wake-up (exact times)."""

    def __init__(self) -> None:
        self.now = 0.0
        self._timers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = 0

    def clock(self) -> float:
        """The governor's clock."""
        return self.now

    def sleep(self, seconds: float) -> asyncio.Future[None]:
        """Resolved when the clock reaches now + ``seconds``."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._timers, (self.now + seconds, self._seq, future))
        self._seq += 1
        return future

    async def drive(self, work: Sequence[Awaitable[Any]]) -> list[Any]:
        """Run ``work`` to its end, moving the clock; AssertionError when calls wait and none sleeps."""
        tasks = [asyncio.ensure_future(w) for w in work]
        while True:
            for _ in range(60):  # let every wake-up (call_soon_threadsafe) and its task run
                await asyncio.sleep(0)
            if all(t.done() for t in tasks):
                return [t.result() for t in tasks]
            assert self._timers, "deadlock: calls wait and none runs"
            at = self._timers[0][0]
            self.now = at
            while self._timers and self._timers[0][0] == at:
                heapq.heappop(self._timers)[2].set_result(None)


async def run_declared(
    governor: Governor, fake: FakeTime, workflow: Workflow, actual: Mapping[str, float], extra: int = 0
) -> None:
    """Ask for every step at once (and ``extra`` undeclared calls); each runs its actual seconds."""

    async def step(task: Task) -> None:
        async with governor.admit(task.id):
            await fake.sleep(actual[task.id])

    async def other(k: int) -> None:
        async with governor.admit("other", demand={"memory_mb": 300.0}):
            await fake.sleep(1.0 + k % 2)

    await fake.drive([*(step(t) for t in workflow.tasks), *(other(k) for k in range(extra))])


@st.composite
def declared_workflows(draw: st.DrawFn, most: int = 7) -> tuple[Workflow, dict[str, float]]:
    """A random workflow (demands up to 1.3x the memory, edges to earlier steps) and actual durations."""
    count = draw(st.integers(1, most))
    tasks = []
    actual = {}
    for i in range(count):
        deps = sorted(draw(st.sets(st.sampled_from([f"s{j}" for j in range(i)]), max_size=2))) if i else []
        duration = draw(st.sampled_from([1.0, 2.0, 3.0]))
        demand = {
            "memory_mb": draw(st.sampled_from([0.0, 200.0, 400.0, 700.0, 1000.0, 1300.0])),
            "cpu": draw(st.sampled_from([0.0, 1.0, 2.0])),
        }
        tasks.append(Task(id=f"s{i}", duration=duration, demand=demand, depends_on=tuple(deps)))
        actual[f"s{i}"] = duration * draw(st.sampled_from([0.5, 1.0, 1.0, 2.0, 4.0]))
    return Workflow(id="declared", tasks=tuple(tasks)), actual
