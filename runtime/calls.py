"""The governor's record of one call, and the trace of every call so far (a dynamic workflow).

:func:`calls_trace` turns the calls that have ended (and those withdrawn before they ran) into
a :class:`~peakopt.runtime.trace.Trace`: one task per call, in request order, with its declared
(or looked-up) demand, its expected duration (else its actual one) and the dependencies it
waited for; one step record per call with its admission and release times in seconds since the
first request. ``peakopt score`` and :meth:`Trace.realised` judge it as any controlled run's.
Calls still waiting or running are left out (the workflow's ``meta.governor`` counts them); a
dependency on a call that never ran is dropped (it was waited for, but nothing ran after it).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from peakopt.models import Machine, Task, Workflow
from peakopt.oracle.uncertain.dispatch import Need
from peakopt.runtime.leases import CallOutcome, GovernorError, Lease
from peakopt.runtime.overuse import OverDeclared as OverDeclared  # the governor's, from here
from peakopt.runtime.overuse import excesses, warn_overuse
from peakopt.runtime.trace import PLACES, StepRecord, StepStatus, StepUsage, Trace

log = logging.getLogger(__name__)

#: Where a call is: waiting for dependencies, ready (waiting for capacity), running, ended, withdrawn.
CallState = Literal["blocked", "ready", "running", "ended", "withdrawn"]


@dataclass(eq=False)
class Call:
    """One call, as the governor tracks it (under its lock)."""

    lease: Lease
    needs: tuple[Need, ...]
    pending: set[str]
    state: CallState = "blocked"
    #: order of becoming ready, and when (the fairness rule's "older")
    seq: int = 0
    ready_at: float = 0.0
    ended_at: float | None = None
    outcome: CallOutcome | None = None
    error: str | None = None
    usage: dict[str, float] | None = None
    waiter: Any = None
    dependents: list[Call] = field(default_factory=list)

    @property
    def id(self) -> str:
        """The lease id."""
        return self.lease.id


_STATUS: dict[CallOutcome, StepStatus] = {
    "ok": "ok",
    "failed": "failed",
    "cancelled": "failed",
    "expired": "failed",
}


def step_usage(usage: Mapping[str, float] | None, demand: Mapping[str, float]) -> StepUsage | None:
    """A call's measured usage as a trace's: ``cpu`` and ``memory_mb`` measured, else as declared."""
    if usage is None:
        return None
    cpu = usage.get("cpu", demand.get("cpu", 0.0))
    return StepUsage(
        cpu_avg=cpu, cpu_peak=cpu, memory_peak_mb=usage.get("memory_mb", demand.get("memory_mb", 0.0))
    )


def _task(call: Call, ran: set[str], t0: float) -> Task:
    lease = call.lease
    length = (call.ended_at or 0.0) - (lease.admitted_at or 0.0) if lease.admitted_at is not None else 0.0
    duration = lease.expected if lease.expected is not None else max(0.0, length)
    meta: dict[str, Any] = {"requested": round(lease.requested_at - t0, PLACES), "name": lease.name}
    if lease.wait is not None:
        meta["wait"] = round(lease.wait, PLACES)
    dropped = [d for d in lease.depends_on if d not in ran]
    if dropped:
        meta["dropped_depends_on"] = dropped
    fields: dict[str, Any] = {
        "id": lease.id,
        "duration": round(duration, PLACES),
        "demand": dict(lease.demand),
        "depends_on": tuple(d for d in lease.depends_on if d in ran),
        "meta": meta,
    }
    if lease.tool is not None:
        fields["tool"] = lease.tool
    return Task.model_validate(fields)


def _record(call: Call, t0: float) -> StepRecord:
    lease = call.lease
    if call.state == "withdrawn" or lease.admitted_at is None:
        return StepRecord(id=lease.id, status="skipped", error=call.error or "withdrawn while waiting")
    start = round(lease.admitted_at - t0, PLACES)
    end = round(max(call.ended_at or 0.0, lease.admitted_at) - t0, PLACES)
    outcome = call.outcome or "ok"
    error = call.error if outcome == "failed" else (call.error or (None if outcome == "ok" else outcome))
    return StepRecord(
        id=lease.id,
        usage=step_usage(call.usage, lease.demand),
        status=_STATUS[outcome],
        start=max(0.0, start),
        end=max(0.0, end),
        error=error,
    )


def calls_trace(
    calls: Sequence[Call], machine: Machine, *, workflow_id: str, policy: str, t0: float, started_at: str
) -> Trace:
    """The trace of the calls that ended or were withdrawn (see the module docstring).

    Raises
    ------
    GovernorError
        When no call has ended yet (a workflow has at least one task).
    """
    done = [c for c in calls if c.state in ("ended", "withdrawn")]
    if not done:
        raise GovernorError("no call has ended yet: the trace would hold no step")
    ran = {c.id for c in done if c.lease.admitted_at is not None}
    left = {s: sum(c.state == s for c in calls) for s in ("blocked", "ready", "running")}
    workflow = Workflow(
        id=workflow_id,
        tasks=tuple(_task(c, ran, t0) for c in done),
        meta={"governor": {"waiting": left["blocked"] + left["ready"], "running": left["running"]}},
    )
    steps = tuple(_record(c, t0) for c in done)
    return Trace(
        workflow=workflow,
        machine=machine,
        policy=policy,
        guarded=True,
        on_failure="continue",
        started_at=started_at,
        status="ok" if all(s.status == "ok" for s in steps) else "failed",
        steps=steps,
    )


class Admissions:
    """The ready positions (1, 2, ...) of the admitted calls, counted in a Fenwick tree.

    :meth:`after` is how many admitted calls became ready after position ``seq``: for a call
    still waiting, how many later calls have passed over it (they were all admitted while it
    waited). Both take O(log n), so the fairness rule costs little however long the queue.
    """

    def __init__(self) -> None:
        self._tree = [0]
        self._total = 0

    def _prefix(self, seq: int) -> int:
        found = 0
        while seq > 0:
            found += self._tree[seq]
            seq &= seq - 1
        return found

    def grow(self, seq: int) -> None:
        """Make room for positions up to ``seq`` (each new one counts no admission yet)."""
        while len(self._tree) <= seq:
            i = len(self._tree)
            self._tree.append(self._prefix(i - 1) - self._prefix(i - (i & -i)))

    def add(self, seq: int) -> None:
        """Count the admission of the call ready at position ``seq``."""
        self._total += 1
        while seq < len(self._tree):
            self._tree[seq] += 1
            seq += seq & -seq

    def after(self, seq: int) -> int:
        """How many admitted calls became ready after position ``seq``."""
        return self._total - self._prefix(seq)


def checked_amounts(call: str, what: str, amounts: Mapping[str, float]) -> dict[str, float]:
    """``amounts`` as floats, each resource a non-empty name and each amount finite and >= 0."""
    found: dict[str, float] = {}
    for resource, amount in amounts.items():
        if (
            not isinstance(resource, str)
            or not resource
            or isinstance(amount, bool)
            or not isinstance(amount, int | float)
            or not 0 <= amount < float("inf")
        ):
            raise GovernorError(f"call {call!r}: {what} {resource!r}: {amount!r} is not a finite number >= 0")
        found[resource] = float(amount)
    return found


def warn_over(lease: Lease, used: Mapping[str, float]) -> None:
    """Warn (:class:`~.overuse.OverDeclared`) when a call used more than it was admitted with."""
    warn_overuse(f"call {lease.id!r}", excesses(lease.demand, used), stacklevel=4)


def wake(call: Call) -> None:
    """Wake the call's waiter: a thread's event, or an asyncio future through its own loop."""
    waiter = call.waiter
    if isinstance(waiter, threading.Event):
        waiter.set()
        return
    loop, future = waiter
    withdrawn = call.state == "withdrawn"

    def resolve() -> None:
        if future.done():
            return
        if withdrawn:
            future.set_exception(
                GovernorError(f"call {call.id!r} was withdrawn while it waited ({call.error})")
            )
        else:
            future.set_result(None)

    try:
        loop.call_soon_threadsafe(resolve)
    except RuntimeError:  # its loop has closed: nobody waits for the lease any more
        log.warning("call %s was admitted after its event loop closed", call.id)
