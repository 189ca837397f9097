"""The governor of live calls: admission, release however a call ends, events, the trace, the store."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
import warnings
from pathlib import Path

import pytest

from peakopt.models import Machine
from peakopt.oracle import evaluate
from peakopt.runtime.governor import Governor
from peakopt.runtime.leases import GovernorError, GovernorEvent
from peakopt.runtime.profiles import ProfileStore

BOX = Machine(name="box", capacity={"memory_mb": 4096.0, "cpu": 2.0})


def judged_safe(governor: Governor) -> bool:
    trace = governor.trace()
    workflow, schedule = trace.realised()
    return evaluate(workflow, trace.machine, schedule).safe


def test_two_calls_that_do_not_fit_together_run_one_after_the_other() -> None:
    governor = Governor(BOX)
    order: list[str] = []

    async def call(name: str) -> str:
        async with governor.admit(name, demand={"memory_mb": 3000}) as lease:
            order.append(f"start {lease.id}")
            await asyncio.sleep(0.02)
            order.append(f"end {lease.id}")
        return name

    async def main() -> list[str]:
        return list(await asyncio.gather(call("a"), call("b")))

    assert asyncio.run(main()) == ["a", "b"]
    assert order == ["start a", "end a", "start b", "end b"]
    assert judged_safe(governor)
    trace = governor.trace()
    assert [s.status for s in trace.steps] == ["ok", "ok"]
    assert trace.steps[1].start is not None and trace.steps[0].end is not None
    assert trace.steps[1].start >= trace.steps[0].end


def test_calls_that_fit_together_run_together() -> None:
    governor = Governor(BOX)
    inside = []

    async def call() -> None:
        async with governor.admit("small", demand={"memory_mb": 1000}):
            inside.append(len(governor.status().running))
            await asyncio.sleep(0.02)

    async def main() -> None:
        await asyncio.gather(*(call() for _ in range(4)))

    asyncio.run(main())
    assert max(inside) == 4
    assert [s.id for s in governor.trace().steps] == ["small", "small#2", "small#3", "small#4"]


def test_a_call_over_capacity_runs_alone() -> None:
    governor = Governor(BOX)
    alone = []

    async def big() -> None:
        async with governor.admit("big", demand={"memory_mb": 9000}):
            alone.append([lease.id for lease in governor.status().running])
            await asyncio.sleep(0.02)

    async def small() -> None:
        async with governor.admit("small", demand={"memory_mb": 10}):
            await asyncio.sleep(0.02)

    async def main() -> None:
        await asyncio.gather(small(), big(), small())

    asyncio.run(main())
    assert alone == [["big"]]
    assert judged_safe(governor)


def test_results_and_exceptions_pass_through_the_decorator() -> None:
    governor = Governor(BOX)

    @governor.govern(demand={"memory_mb": 100})
    async def fetch(x: int) -> dict[str, int]:
        await asyncio.sleep(0)
        return {"x": x}

    @governor.govern(demand={"memory_mb": 100})
    def parse(x: int) -> int:
        if x < 0:
            raise ValueError("negative")
        return x * 2

    assert asyncio.run(fetch(3)) == {"x": 3}
    assert parse(4) == 8
    with pytest.raises(ValueError, match="negative"):
        parse(-1)
    steps = {s.id: s for s in governor.trace().steps}
    assert steps["fetch"].status == "ok" and steps["parse"].status == "ok"
    assert steps["parse#2"].status == "failed" and "ValueError: negative" in (steps["parse#2"].error or "")
    assert governor.status().running == () and governor.status().in_use["memory_mb"] == 0


def test_cancelling_a_waiting_call_withdraws_it_and_a_running_one_frees_its_share_at_once() -> None:
    governor = Governor(BOX)

    async def hold(name: str, started: asyncio.Event | None = None) -> None:
        async with governor.admit(name, demand={"memory_mb": 4000}):
            if started is not None:
                started.set()
            await asyncio.sleep(10)

    async def main() -> None:
        started = asyncio.Event()
        first = asyncio.create_task(hold("first", started))
        await started.wait()
        second = asyncio.create_task(hold("second"))
        await asyncio.sleep(0.01)
        assert [w.id for w in governor.status().waiting] == ["second"]
        second.cancel()
        await asyncio.gather(second, return_exceptions=True)
        assert governor.status().waiting == ()
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        assert governor.status().in_use["memory_mb"] == 0
        # the share is free at once: a third call is admitted without waiting
        lease = await asyncio.wait_for(governor.acquire("third", demand={"memory_mb": 4000}), 1)
        governor.release(lease)

    asyncio.run(main())
    steps = {s.id: s for s in governor.trace().steps}
    assert steps["second"].status == "skipped"
    assert steps["first"].status == "failed" and steps["first"].error == "CancelledError"
    assert steps["third"].status == "ok"


def test_release_is_idempotent_and_refuses_a_foreign_lease() -> None:
    governor, other = Governor(BOX), Governor(BOX)
    lease = governor.acquire_blocking("a", demand={})
    governor.release(lease)
    governor.release(lease, outcome="failed")
    assert governor.status().released == 1
    assert governor.trace().steps[0].status == "ok"
    with pytest.raises(GovernorError, match="not one of this governor's"):
        other.release(lease)


def test_a_blocking_acquire_times_out_and_withdraws() -> None:
    governor = Governor(BOX)
    held = governor.acquire_blocking("held", demand={"memory_mb": 4096})
    with pytest.raises(TimeoutError, match="not admitted within"):
        governor.acquire_blocking("late", demand={"memory_mb": 1}, timeout=0.01)
    assert governor.status().waiting == ()
    governor.release(held)


def test_sync_calls_in_threads_and_async_calls_share_one_capacity() -> None:
    governor = Governor(BOX)
    peak = [0.0]
    lock = threading.Lock()

    def note() -> None:
        with lock:
            peak[0] = max(peak[0], governor.status().in_use["memory_mb"])

    @governor.govern(demand={"memory_mb": 1500})
    def sync_tool() -> None:
        note()
        threading.Event().wait(0.01)

    @governor.govern(demand={"memory_mb": 1500})
    async def async_tool() -> None:
        note()
        await asyncio.sleep(0.01)

    async def main() -> None:
        await asyncio.gather(
            *(asyncio.to_thread(sync_tool) for _ in range(5)), *(async_tool() for _ in range(5))
        )

    asyncio.run(main())
    assert 0 < peak[0] <= 4096
    assert judged_safe(governor)
    assert len(governor.trace().steps) == 10


def test_a_call_without_demand_is_looked_up_in_the_profile_store(tmp_path: Path) -> None:
    store = ProfileStore(tmp_path / "profiles.json")
    store.observe("embed", seconds=1.0, demand={"memory_mb": 800})
    store.observe("embed", seconds=2.0, demand={"memory_mb": 1000})
    store.save()
    governor = Governor(BOX, profiles=ProfileStore(tmp_path / "profiles.json"))
    lease = governor.acquire_blocking("embed-docs", tool="embed")
    assert lease.demand == {"memory_mb": pytest.approx(980.0)}
    assert lease.expected == pytest.approx(1.9)
    governor.release(lease)
    with pytest.raises(GovernorError, match="tool 'rerank' is not in the profile store"):
        governor.acquire_blocking("rerank")
    with pytest.raises(GovernorError, match="no profile store"):
        Governor(BOX).acquire_blocking("rerank")


@pytest.mark.parametrize(
    "demand", [{"memory_mb": -1}, {"memory_mb": float("nan")}, {"memory_mb": float("inf")}, {"": 1}]
)
def test_a_bad_demand_is_refused(demand: dict[str, float]) -> None:
    with pytest.raises(GovernorError, match="demand"):
        Governor(BOX).acquire_blocking("x", demand=demand)


def test_a_dependency_must_be_an_earlier_call_and_is_waited_for() -> None:
    governor = Governor(BOX)
    with pytest.raises(GovernorError, match="has not been requested"):
        governor.acquire_blocking("b", demand={}, depends_on=["a"])

    async def main() -> None:
        first = await governor.acquire("a", demand={})
        waiting = asyncio.create_task(governor.acquire("b", demand={}, depends_on=[first]))
        await asyncio.sleep(0.01)
        assert not waiting.done()
        governor.release(first)
        governor.release(await asyncio.wait_for(waiting, 1))

    asyncio.run(main())
    trace = governor.trace()
    assert trace.workflow.tasks[1].depends_on == ("a",)
    assert judged_safe(governor)


def test_events_come_in_order_and_unsubscribe_stops_them() -> None:
    governor = Governor(BOX)
    seen: list[GovernorEvent] = []
    stop = governor.subscribe(seen.append)
    lease = governor.acquire_blocking("a", demand={"memory_mb": 1})
    governor.release(lease, outcome="failed", error="boom")
    stop()
    governor.release(governor.acquire_blocking("b", demand={}))
    assert [(e.kind, e.lease.id) for e in seen] == [("requested", "a"), ("admitted", "a"), ("released", "a")]
    assert seen[-1].outcome == "failed" and seen[-1].error == "boom"
    assert seen[1].lease.admitted_at is not None


def test_a_named_policy_that_is_unknown_is_refused() -> None:
    with pytest.raises(GovernorError, match="known: admission"):
        Governor(BOX, policy="robust")


def test_a_count_cap_admits_at_most_k() -> None:
    governor = Governor(BOX, policy="cap:2")
    most = [0]

    async def call() -> None:
        async with governor.admit("c", demand={}):
            most[0] = max(most[0], len(governor.status().running))
            await asyncio.sleep(0.01)

    async def main() -> None:
        await asyncio.gather(*(call() for _ in range(6)))

    asyncio.run(main())
    assert most[0] == 2


def admitted_order(events: list[GovernorEvent]) -> list[str]:
    return [e.lease.id for e in events if e.kind == "admitted"]


@pytest.mark.parametrize("bypass", [0, 1, 2, 5])
def test_a_large_call_is_passed_over_at_most_bypass_times_then_capacity_is_reserved(bypass: int) -> None:
    machine = Machine(name="one", capacity={"memory_mb": 1000.0})
    governor = Governor(machine, bypass=bypass)
    events: list[GovernorEvent] = []
    governor.subscribe(events.append)
    held = governor.acquire_blocking("held", demand={"memory_mb": 500})
    big = threading.Thread(
        target=lambda: governor.release(governor.acquire_blocking("big", demand={"memory_mb": 1000}))
    )
    big.start()
    while not governor.status().waiting:
        threading.Event().wait(0.001)
    smalls = []
    for _ in range(8):  # a stream of small calls, each of which fits beside the held one
        with contextlib.suppress(TimeoutError):
            smalls.append(governor.acquire_blocking("small", demand={"memory_mb": 50}, timeout=0.01))
    assert len(smalls) == min(bypass, 8)
    for lease in [held, *smalls]:
        governor.release(lease)
    big.join(5)
    assert not big.is_alive()
    order = admitted_order(events)
    assert order.index("big") == 1 + min(bypass, 8)


def test_patience_bounds_the_wait_in_time_too() -> None:
    now = [0.0]
    machine = Machine(name="one", capacity={"memory_mb": 1000.0})
    governor = Governor(machine, bypass=100, patience=5.0, clock=lambda: now[0])
    held = governor.acquire_blocking("held", demand={"memory_mb": 500})
    waiting = threading.Thread(
        target=lambda: governor.release(governor.acquire_blocking("big", demand={"memory_mb": 1000}))
    )
    waiting.start()
    while not governor.status().waiting:
        threading.Event().wait(0.001)
    now[0] = 4.0
    governor.release(governor.acquire_blocking("early", demand={"memory_mb": 10}, timeout=1))
    now[0] = 6.0  # big has waited 6 s: the capacity is now reserved for it
    with pytest.raises(TimeoutError):
        governor.acquire_blocking("late", demand={"memory_mb": 10}, timeout=0.01)
    governor.release(held)
    waiting.join(5)
    assert [s.id for s in governor.trace().steps if s.status == "ok"] == ["held", "big", "early"]


class Reversed:
    """A plug-in policy: the newest ready call first (LIFO)."""

    def __call__(self, now, ready, running, free):  # type: ignore[no-untyped-def]
        return list(reversed(ready))


class Never:
    """A policy that never starts anything: the governor must still not stall."""

    def __call__(self, now, ready, running, free):  # type: ignore[no-untyped-def]
        return ()


@pytest.mark.parametrize(
    ("policy", "expected"), [(Reversed(), ["held", "c", "b", "a"]), (Never(), ["held", "a", "b", "c"])]
)
def test_a_plug_in_policy_decides_the_order_and_none_can_stall_the_governor(
    policy: object, expected: list[str]
) -> None:
    machine = Machine(name="one", capacity={"memory_mb": 1000.0})
    governor = Governor(machine, policy=policy)  # type: ignore[arg-type]
    events: list[GovernorEvent] = []
    governor.subscribe(events.append)
    held = governor.acquire_blocking("held", demand={"memory_mb": 1000})

    async def main() -> None:
        tasks = [asyncio.create_task(governor.acquire(n, demand={"memory_mb": 1000})) for n in "abc"]
        await asyncio.sleep(0.01)
        governor.release(held)
        while any(not t.done() for t in tasks):
            done, _ = await asyncio.wait([t for t in tasks if not t.done()], return_when="FIRST_COMPLETED")
            for task in done:
                governor.release(task.result())

    asyncio.run(main())
    assert admitted_order(events) == expected


def test_peakopt_profile_fills_the_store_the_governor_reads(tmp_path: Path) -> None:
    from cli_helpers import run

    store = tmp_path / "tools.json"
    script = "x = bytearray(40 * 2**20); x[::4096] = b'1' * len(x[::4096])"
    code, out, err = run(
        "profile", "--runs", "2", "--id", "alloc", "--store", str(store), "--", sys.executable, "-c", script
    )
    assert code == 0, err
    assert out == "" and f"wrote {store}: tool 'alloc': 2 samples" in err
    demand = ProfileStore(store).demand("alloc")
    assert demand is not None and 40 <= demand["memory_mb"] < 200
    governor = Governor(BOX, profiles=ProfileStore(store))
    lease = governor.acquire_blocking("alloc")
    assert lease.demand == demand and lease.expected is not None
    governor.release(lease)
    store.write_text("{}")
    code, _, err = run("profile", "--store", str(store), "--", sys.executable, "-c", "pass")
    assert code == 1 and err.count("Error:") == 1 and "is not a profile store" in err and str(store) in err


def test_the_store_keeps_a_running_p90_of_the_last_samples() -> None:
    from peakopt.runtime.profiles import WINDOW

    store = ProfileStore()
    for k in range(1, 11):
        store.observe("t", seconds=float(k), demand={"memory_mb": 100.0 * k})
    assert store.demand("t") == pytest.approx({"memory_mb": 910.0})
    assert store.expected("t") == pytest.approx(9.1)
    for _ in range(WINDOW):  # the tool got lighter: the old samples age out of the window
        store.observe("t", seconds=1.0, demand={"memory_mb": 50.0})
    assert store.demand("t") == {"memory_mb": 50.0} and store.expected("t") == 1.0
    with pytest.raises(ValueError, match="not a finite number"):
        store.observe("t", seconds=-1.0)


def test_a_measured_usage_over_the_declaration_is_warned_recorded_and_learnt() -> None:
    from peakopt.runtime.governor import OverDeclared

    store = ProfileStore()
    governor = Governor(BOX, profiles=store)
    lease = governor.acquire_blocking("embed", demand={"memory_mb": 100, "cpu": 1})
    with pytest.warns(
        OverDeclared, match=r"'embed' used more than it declared: memory_mb 400 measured against 100"
    ):
        governor.release(lease, usage={"memory_mb": 400, "cpu": 0.5})
    honest = governor.acquire_blocking("embed", demand={"memory_mb": 500, "cpu": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        governor.release(honest, usage={"memory_mb": 400})
    trace = governor.trace()
    assert trace.steps[0].usage is not None and trace.steps[0].usage.memory_peak_mb == 400
    assert trace.steps[1].usage is not None and trace.steps[1].usage.cpu_avg == 1.0  # not measured: declared
    workflow, _ = trace.realised("measured")
    assert workflow.tasks[0].peak("memory_mb") == 400
    assert store.demand("embed") == {"cpu": 0.5, "memory_mb": 400.0}  # what was measured only
    with pytest.raises(GovernorError, match="usage"):
        governor.release(governor.acquire_blocking("x", demand={}), usage={"memory_mb": -1})


@pytest.mark.parametrize("bypass", [0, 1, 2, 3])
def test_one_release_admits_at_most_bypass_calls_past_a_waiting_one(bypass: int) -> None:
    machine = Machine(name="one", capacity={"memory_mb": 1000.0})
    governor = Governor(machine, bypass=bypass)

    async def main() -> list[str]:
        first = await governor.acquire("first", demand={"memory_mb": 600})
        second = await governor.acquire("second", demand={"memory_mb": 400})
        waiting = [asyncio.create_task(governor.acquire("big", demand={"memory_mb": 1000}))]
        waiting += [
            asyncio.create_task(governor.acquire("small", demand={"memory_mb": 100})) for _ in range(4)
        ]
        await asyncio.sleep(0.01)
        governor.release(second)  # 400 free: all four small calls would fit at once
        await asyncio.sleep(0.01)
        running = sorted(lease.id for lease in governor.status().running)
        for task in waiting:
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
        for lease in governor.status().running:
            governor.release(lease)
        governor.release(first)
        return running

    running = asyncio.run(main())
    assert running == sorted(["first", *["small", "small#2", "small#3", "small#4"][:bypass]])


def test_leases_and_events_can_be_kept_in_sets() -> None:
    governor = Governor(BOX)
    seen: list[GovernorEvent] = []
    governor.subscribe(seen.append)
    leases = {
        governor.acquire_blocking("a", demand={"memory_mb": 1}),
        governor.acquire_blocking("a", demand={}),
    }
    assert {lease.id for lease in leases} == {"a", "a#2"}
    for lease in leases:
        governor.release(lease, usage={"memory_mb": 0})
    assert len(set(seen)) == len(seen) == 6


def test_threads_hammering_one_governor_never_overflow_it() -> None:
    from governor_helpers import over, peak_in_use

    machine = Machine(name="one", capacity={"memory_mb": 1000.0, "cpu": 2.0})
    governor = Governor(machine, bypass=3)
    events: list[GovernorEvent] = []
    governor.subscribe(events.append)
    failures: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            for j in range(60):
                demand = {"memory_mb": float((k * 7 + j * 13) % 1200), "cpu": float((k + j) % 3)}
                timeout = 0.05 if j % 5 == 0 else None
                with (
                    contextlib.suppress(TimeoutError),
                    governor.admit_sync(f"w{k}", demand=demand, timeout=timeout),
                ):
                    pass
        except BaseException as exc:  # reported below: a thread's exception would be lost
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures and not any(t.is_alive() for t in threads)
    assert governor.status().running == () and governor.status().waiting == ()
    assert not over(peak_in_use(events, machine), machine)
    assert judged_safe(governor)


def test_releasing_a_waiting_call_withdraws_it_and_its_waiter_hears_why() -> None:
    governor = Governor(BOX)
    held = governor.acquire_blocking("held", demand={"memory_mb": 4096})

    async def main() -> None:
        waiting = asyncio.create_task(governor.acquire("late", demand={"memory_mb": 10}))
        await asyncio.sleep(0.01)
        (lease,) = governor.status().waiting
        governor.release(lease, outcome="expired")
        with pytest.raises(
            GovernorError, match=r"'late' was withdrawn while it waited \(released while waiting"
        ):
            await asyncio.wait_for(waiting, 1)

    asyncio.run(main())
    thread_error: list[BaseException] = []

    def blocked() -> None:
        try:
            governor.acquire_blocking("later", demand={"memory_mb": 10})
        except GovernorError as exc:
            thread_error.append(exc)

    thread = threading.Thread(target=blocked)
    thread.start()
    while not governor.status().waiting:
        threading.Event().wait(0.001)
    governor.release(governor.status().waiting[0])
    thread.join(5)
    assert len(thread_error) == 1 and "withdrawn" in str(thread_error[0])
    governor.release(held)
    assert {s.id: s.status for s in governor.trace().steps} == {
        "held": "ok",
        "late": "skipped",
        "later": "skipped",
    }


class Broken:
    def __call__(self, now, ready, running, free):  # type: ignore[no-untyped-def]
        raise RuntimeError("policy bug")


def test_a_policy_that_raises_is_logged_and_the_ready_order_used(caplog: pytest.LogCaptureFixture) -> None:
    governor = Governor(BOX, policy=Broken())
    first = governor.acquire_blocking("a", demand={"memory_mb": 4000})
    done = threading.Thread(
        target=lambda: governor.release(governor.acquire_blocking("b", demand={"memory_mb": 4000}))
    )
    done.start()
    while not governor.status().waiting:
        threading.Event().wait(0.001)
    governor.release(first)
    done.join(5)
    assert not done.is_alive()
    assert "policy Broken raised" in caplog.text
