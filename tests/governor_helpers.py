"""Helpers of the governor tests: random dynamic workloads run for real, and checks from the event stream."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from hypothesis import strategies as st

from peakopt.models import Machine
from peakopt.oracle.uncertain.dispatch import LOAD_SLACK
from peakopt.runtime.governor import Governor
from peakopt.runtime.leases import GovernorEvent

#: How a call of a workload ends: returns, raises, is cancelled (waiting or running, whichever it
#: is then), or (a sync call) gives up waiting after a timeout.
FATES = ("ok", "fail", "cancel", "timeout")


@dataclass(frozen=True)
class Planned:
    """One call of a workload: when it asks, what it demands, how long it runs and how it ends."""

    arrival: float
    demand: Mapping[str, float]
    seconds: float
    sync: bool
    fate: str
    after: float  # seconds after asking at which a cancel or timeout happens
    depends_on: tuple[int, ...] = ()


MACHINE = Machine(name="box", capacity={"memory_mb": 1000.0, "cpu": 2.0})


@st.composite
def workloads(draw: st.DrawFn, most: int = 14) -> list[Planned]:
    """Calls arriving over time, demands up to 1.5× the capacity, failures, cancellations, threads."""
    count = draw(st.integers(1, most))
    calls: list[Planned] = []
    arrival = 0.0
    for i in range(count):
        arrival += draw(st.sampled_from([0.0, 0.0, 0.001, 0.003]))
        demand = {
            "memory_mb": draw(st.sampled_from([0.0, 100.0, 300.0, 600.0, 999.0, 1000.0, 1500.0])),
            "cpu": draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0])),
        }
        sync = draw(st.booleans())
        fate = draw(st.sampled_from(FATES if sync else FATES[:3]))
        if sync and fate == "cancel":
            fate = "ok"  # a thread cannot be cancelled
        earlier = [j for j in range(i) if not calls[j].sync]  # asked for sure before this one
        deps = tuple(sorted(draw(st.sets(st.sampled_from(earlier), max_size=2)))) if earlier else ()
        calls.append(
            Planned(
                arrival=arrival,
                demand=demand,
                seconds=draw(st.sampled_from([0.0, 0.001, 0.004, 0.01])),
                sync=sync,
                fate=fate,
                after=draw(st.sampled_from([0.0, 0.002, 0.006])),
                depends_on=deps,
            )
        )
    return calls


async def run_workload(governor: Governor, calls: Sequence[Planned]) -> dict[str, str]:
    """Run every call for real; call id -> how it ended as its caller saw it."""
    seen: dict[str, str] = {}

    def sync_call(i: int, plan: Planned) -> None:
        name = f"c{i}"
        timeout = plan.after if plan.fate == "timeout" else None
        try:
            with governor.admit_sync(name, demand=plan.demand, timeout=timeout):
                threading.Event().wait(plan.seconds)
                if plan.fate == "fail":
                    raise RuntimeError("boom")
        except TimeoutError:
            seen[name] = "timed out"
            return
        except RuntimeError:
            seen[name] = "failed"
            return
        seen[name] = "ok"

    async def async_call(i: int, plan: Planned) -> None:
        name = f"c{i}"
        if plan.fate == "cancel":
            task = asyncio.current_task()
            assert task is not None
            asyncio.get_running_loop().call_later(plan.after, task.cancel)
        try:
            deps = [f"c{j}" for j in plan.depends_on]
            async with governor.admit(name, demand=plan.demand, depends_on=deps):
                await asyncio.sleep(plan.seconds)
                if plan.fate == "fail":
                    raise RuntimeError("boom")
        except asyncio.CancelledError:
            # the share is free the moment the cancellation reaches the caller
            assert name not in {lease.id for lease in governor.status().running}
            assert name not in {lease.id for lease in governor.status().waiting}
            seen[name] = "cancelled"
            return
        except RuntimeError:
            seen[name] = "failed"
            return
        seen[name] = "ok"

    async def one(i: int, plan: Planned) -> None:
        await asyncio.sleep(plan.arrival)
        if plan.sync:
            await asyncio.to_thread(sync_call, i, plan)
        else:
            await async_call(i, plan)

    await asyncio.wait_for(asyncio.gather(*(one(i, p) for i, p in enumerate(calls))), 60)
    return seen


def peak_in_use(events: Sequence[GovernorEvent], machine: Machine) -> dict[str, float]:
    """Per resource, the highest load of the admitted calls (clamped peaks), replayed from the events."""
    load = dict.fromkeys(machine.capacity, 0.0)
    peak = dict(load)
    running: dict[str, Mapping[str, float]] = {}
    for event in events:
        lease = event.lease
        if event.kind == "admitted":
            running[lease.id] = lease.demand
            sign = 1.0
        elif event.kind == "released":
            sign = -1.0
        else:
            continue
        for resource, capacity in machine.capacity.items():
            load[resource] += sign * min(lease.demand.get(resource, 0.0), capacity)
            peak[resource] = max(peak[resource], load[resource])
    return peak


def over(peak: Mapping[str, float], machine: Machine) -> dict[str, float]:
    """The resources whose peak exceeds the capacity (beyond floating-point slack)."""
    return {r: v for r, v in peak.items() if v > machine.capacity[r] * (1 + LOAD_SLACK)}


def passed_over(
    events: Sequence[GovernorEvent], counted: Callable[[str, str], bool] = lambda older, later: True
) -> dict[str, int]:
    """Per call, how many calls that became ready after it were admitted while it waited.

    A call is ready at its request, or, with dependencies, at the last of their ends (a
    ``released`` or ``withdrawn`` event) after it; it waits until admitted or withdrawn.
    ``counted(older, later)`` says which passes count (all by default).
    """
    deps: dict[str, set[str]] = {}
    ready_at: dict[str, int] = {}
    ended: set[str] = set()
    waiting: list[str] = []  # ready and not yet admitted, in ready order
    counts: dict[str, int] = {}
    for position, event in enumerate(events):
        lid = event.lease.id
        newly: list[str] = []
        if event.kind == "requested":
            deps[lid] = {d for d in event.lease.depends_on if d not in ended}
            if not deps[lid]:
                newly.append(lid)
        elif event.kind == "admitted":
            i = waiting.index(lid)
            for older in waiting[:i]:
                if counted(older, lid):
                    counts[older] = counts.get(older, 0) + 1
            waiting.pop(i)
        elif event.kind in ("released", "withdrawn"):
            ended.add(lid)
            if lid in waiting:
                waiting.remove(lid)
            for other, pending in deps.items():
                if lid in pending:
                    pending.discard(lid)
                    if not pending and other not in ready_at and other not in ended:
                        newly.append(other)
        for lid_ in newly:
            ready_at[lid_] = position
            waiting.append(lid_)
    return counts
