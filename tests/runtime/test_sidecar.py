"""The sidecar's leases without HTTP: long polls that keep their place, heartbeats, expiry, ends, stop."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from sidecar_helpers import Clock, service

from peakopt.runtime.sidecar import RequestError, Sidecar


def run(body: Callable[[Sidecar, Clock], Awaitable[Any]], ttl: float = 10.0) -> Any:
    clock = Clock()
    found = service(ttl, clock=clock)

    async def main() -> Any:
        try:
            return await body(found.sidecar, clock)
        finally:
            await found.sidecar.stop()

    return asyncio.run(main())


def refused(status: int) -> Any:
    return pytest.raises(RequestError, match=r".", check=lambda exc: exc.status == status)


def test_a_request_that_fits_is_admitted_at_once_and_one_that_does_not_waits() -> None:
    async def body(sidecar: Sidecar, clock: Clock) -> None:
        first = await sidecar.admit("a", demand={"memory_mb": 800}, wait=5)
        assert first.state == "admitted" and first.id == "a"
        second = await sidecar.admit("b", demand={"memory_mb": 800}, wait=0.01)
        assert second.state == "waiting" and second.id == "b"
        poll = asyncio.create_task(sidecar.wait("b", 5))
        await asyncio.sleep(0.01)
        sidecar.release("a")
        assert (await poll).state == "admitted"

    run(body)


def test_a_waiting_request_keeps_its_place_across_polls() -> None:
    async def body(sidecar: Sidecar, clock: Clock) -> None:
        await sidecar.admit("big", demand={"memory_mb": 1000}, wait=0)
        waiting = await sidecar.admit("next", demand={"memory_mb": 600}, wait=0)
        later = await sidecar.admit("later", demand={"memory_mb": 600}, wait=0)
        assert (waiting.state, later.state) == ("waiting", "waiting")
        sidecar.release("big")  # nobody is polling: the older request is still the one admitted
        assert waiting.state == "admitted" and later.state == "waiting"
        assert (await sidecar.wait("next", 0)).state == "admitted"

    run(body)


def test_a_lease_expires_after_the_ttl_without_heartbeat_and_its_capacity_is_free() -> None:
    async def body(sidecar: Sidecar, clock: Clock) -> None:
        lease = await sidecar.admit("a", demand={"memory_mb": 1000}, wait=0)
        clock.advance(9)
        sidecar.heartbeat("a")
        clock.advance(9)
        assert (sidecar.sweep(), lease.state) == (0, "admitted")  # 9 s since the heartbeat
        clock.advance(1.5)
        sidecar.sweep()
        assert lease.state == "expired" and lease.outcome == "expired"
        assert "no heartbeat for 10 s" in (lease.error or "")
        assert sidecar.governor.status().in_use["memory_mb"] == 0
        with refused(410):
            sidecar.heartbeat("a")
        with refused(410):
            sidecar.release("a")
        assert (await sidecar.admit("b", demand={"memory_mb": 1000}, wait=0)).state == "admitted"

    run(body)


def test_a_waiting_request_not_polled_within_the_ttl_is_withdrawn() -> None:
    async def body(sidecar: Sidecar, clock: Clock) -> None:
        await sidecar.admit("a", demand={"memory_mb": 1000}, wait=0)
        waiting = await sidecar.admit("b", demand={"memory_mb": 500}, wait=0)
        clock.advance(5)
        sidecar.heartbeat("a")
        clock.advance(6)  # b: 11 s since its last answer
        sidecar.sweep()
        assert waiting.state == "withdrawn" and "not polled" in (waiting.error or "")
        with refused(410):
            await sidecar.wait("b", 0)
        assert [t.id for t in sidecar.tickets()] == ["a"]

    run(body)


def test_a_poll_in_progress_keeps_its_request_alive_however_long() -> None:
    async def body(sidecar: Sidecar, clock: Clock) -> None:
        await sidecar.admit("a", demand={"memory_mb": 1000}, wait=0)
        poll = asyncio.create_task(sidecar.admit("b", demand={"memory_mb": 500}, wait=0.2))
        await asyncio.sleep(0.05)
        clock.advance(60)
        sidecar.heartbeat("a")
        sidecar.sweep()
        found = await poll
        assert found.state == "waiting" and found.deadline == clock.now + 10

    run(body)


def test_release_is_idempotent_and_withdraws_a_waiting_request() -> None:
    async def body(sidecar: Sidecar, clock: Clock) -> None:
        await sidecar.admit("a", demand={"memory_mb": 1000}, wait=0)
        waiting = await sidecar.admit("b", demand={"memory_mb": 1}, wait=0)
        assert sidecar.release("b").state == "withdrawn"
        assert sidecar.release("b").state == "withdrawn"
        done = sidecar.release("a", "failed", "boom")
        assert (done.state, done.outcome, done.error) == ("released", "failed", "boom")
        assert sidecar.release("a").outcome == "failed"  # again: the first answer
        with refused(409):
            sidecar.heartbeat("a")
        with refused(409):
            await sidecar.wait("b", 0)
        await asyncio.sleep(0.01)  # the governor wakes the withdrawn waiter through the loop
        assert waiting.task is not None and waiting.task.done()

    run(body)


@pytest.mark.parametrize(
    ("call", "status", "says"),
    [
        (lambda s: s.heartbeat("nope"), 404, "no lease 'nope'"),
        (lambda s: s.release("nope"), 404, "no lease 'nope'"),
        (lambda s: s.release("a", "expired"), 422, "outcome 'expired' is not one of ok, failed, cancelled"),
    ],
    ids=["heartbeat-unknown", "release-unknown", "release-expired-outcome"],
)
def test_refusals_of_leases(call: Callable[[Sidecar], object], status: int, says: str) -> None:
    async def body(sidecar: Sidecar, clock: Clock) -> None:
        await sidecar.admit("a", demand={"memory_mb": 1}, wait=0)
        with pytest.raises(RequestError) as caught:
            call(sidecar)
        assert caught.value.status == status and says in str(caught.value)

    run(body)


@pytest.mark.parametrize(
    ("demand", "depends_on", "says"),
    [
        ({"gpu_mb": 1}, (), "resource 'gpu_mb' is not one of the machine's (box: cpu, memory_mb)"),
        ({"memory_mb": -1}, (), "is not a finite number >= 0"),
        ({"memory_mb": float("nan")}, (), "is not a finite number >= 0"),
        ({"memory_mb": float("inf")}, (), "is not a finite number >= 0"),
        (None, (), "no demand declared"),
        ({"memory_mb": 1}, ("ghost",), "depends on 'ghost', which has not been requested"),
    ],
    ids=["unknown-resource", "negative", "nan", "inf", "none-no-store", "unknown-dependency"],
)
def test_bad_requests_are_refused_with_one_sentence_and_leave_nothing_behind(
    demand: dict[str, float] | None, depends_on: tuple[str, ...], says: str
) -> None:
    async def body(sidecar: Sidecar, clock: Clock) -> None:
        with pytest.raises(RequestError) as caught:
            await sidecar.admit("x", demand=demand, depends_on=depends_on, wait=0)
        assert caught.value.status == 422 and says in str(caught.value)
        assert "\n" not in str(caught.value)
        assert sidecar.tickets() == [] and sidecar.governor.status().waiting == ()

    run(body)


def test_stop_withdraws_the_waiting_before_releasing_the_held() -> None:
    async def body(sidecar: Sidecar, clock: Clock) -> list[str]:
        events: list[str] = []
        sidecar.governor.subscribe(lambda e: events.append(f"{e.kind} {e.lease.id}"))
        held = await sidecar.admit("a", demand={"memory_mb": 1000}, wait=0)
        poll = asyncio.create_task(sidecar.admit("b", demand={"memory_mb": 1000}, wait=30))
        await asyncio.sleep(0.01)
        await sidecar.stop()
        with pytest.raises(RequestError) as caught:
            await poll
        assert caught.value.status == 503
        assert held.state == "released" and held.error == "the service stopped"
        with refused(503):
            await sidecar.admit("c", demand={}, wait=0)
        return events

    events = run(body)
    assert events[-2:] == ["withdrawn b", "released a"]  # b was never admitted


def test_the_ttl_must_be_positive_and_finite() -> None:
    for ttl in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="ttl must be a positive number"):
            service(ttl)


def test_an_admit_the_governor_never_announces_fails_and_leaves_no_task(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def body(sidecar: Sidecar, clock: Clock) -> None:
        async def silent(name: str, **kwargs: object) -> None:
            await asyncio.sleep(3600)

        monkeypatch.setattr(sidecar.governor, "acquire", silent)
        with pytest.raises(RuntimeError, match="did not announce the request"):
            await sidecar.admit("a", demand={}, wait=0)
        await asyncio.sleep(0)
        assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []

    run(body)
