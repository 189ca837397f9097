"""Property tests of the governor over random dynamic workloads run for real (asyncio tasks and threads).

Calls arrive over time with random demands (over-capacity ones among them), dependencies on
earlier calls, durations, failures, cancellations (of waiting and of running calls, whichever
they are at that moment) and timeouts of sync calls in threads. Every run must: never hold
more than a capacity (replayed from the events, and judged safe by the oracle from the trace),
end every call (no deadlock: the run ends within its time limit; nothing left running or
waiting; one end event per call, agreeing with what its caller saw), and pass no waiting call
over more than ``bypass`` times.
"""

from __future__ import annotations

import asyncio

import pytest
from governor_helpers import MACHINE, Planned, over, passed_over, peak_in_use, run_workload, workloads
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from peakopt.oracle import evaluate
from peakopt.runtime.governor import Governor
from peakopt.runtime.leases import GovernorEvent


class Newest:
    """A plug-in policy: the newest ready call first (LIFO), through the OnlinePolicy interface."""

    def __call__(self, now, ready, running, free):  # type: ignore[no-untyped-def]
        return list(reversed(ready))


POLICIES = ("admission", "admission:strict", "cap:2", "newest")
QUICK = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MANY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_run(calls: list[Planned], policy: str, bypass: int) -> None:
    governor = Governor(MACHINE, policy=Newest() if policy == "newest" else policy, bypass=bypass)
    events: list[GovernorEvent] = []
    governor.subscribe(events.append)
    seen = asyncio.run(run_workload(governor, calls))

    # every call ended, as its caller saw it
    assert len(seen) == len(calls)
    status = governor.status()
    assert status.running == () and status.waiting == ()
    assert all(v == 0 for v in status.in_use.values())
    ends = [e for e in events if e.kind in ("released", "withdrawn")]
    assert sorted(e.lease.id for e in ends) == sorted(seen)
    trace = governor.trace()
    steps = {s.id: s for s in trace.steps}
    for name, how in seen.items():
        step = steps[name]
        if how == "ok":
            assert step.status == "ok"
        elif how == "failed":
            assert step.status == "failed" and "boom" in (step.error or "")
        elif how == "timed out":
            assert step.status == "skipped"
        else:  # cancelled: withdrawn while waiting, released as cancelled while running, or admitted
            # in the instant it was cancelled (then released at once, having run for no time)
            assert step.status == "skipped" or step.error in ("CancelledError", "cancelled while waiting")

    # the capacity, from the events and by the oracle from the trace
    assert not over(peak_in_use(events, MACHINE), MACHINE)
    workflow, schedule = trace.realised()
    score = evaluate(workflow, MACHINE, schedule)
    assert score.safe, (score.avoidable_cva, score.dependency_violations)
    assert score.dependency_violations == 0

    # the fairness bound
    counts = passed_over(events)
    assert max(counts.values(), default=0) <= bypass, counts


@QUICK
@given(calls=workloads(), policy=st.sampled_from(POLICIES), bypass=st.integers(0, 3))
def test_random_dynamic_workloads_hold_every_guarantee(
    calls: list[Planned], policy: str, bypass: int
) -> None:
    check_run(calls, policy, bypass)


@pytest.mark.slow
@MANY
@given(calls=workloads(most=30), policy=st.sampled_from(POLICIES), bypass=st.integers(0, 4))
def test_many_random_dynamic_workloads_hold_every_guarantee(
    calls: list[Planned], policy: str, bypass: int
) -> None:
    check_run(calls, policy, bypass)
