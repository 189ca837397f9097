"""A workflow declared to the governor: calls matched to its steps, a planned order, re-planning.

Runs on a fake clock (the governor's injectable ``clock``; the calls sleep on it), so times are
exact: the oracle judges each trace, starts follow the plan's order, and a robust run is never
slower than one call at a time.
"""

from __future__ import annotations

import asyncio
import itertools
import threading

import pytest
from declared_helpers import MACHINE, FakeTime, declared_workflows, run_declared
from governor_helpers import over, passed_over, peak_in_use
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from peakopt.models import Task, Workflow
from peakopt.oracle import evaluate
from peakopt.oracle.uncertain.policies import order_policy
from peakopt.runtime.governor import Governor
from peakopt.runtime.leases import GovernorError, GovernorEvent
from peakopt.runtime.replan import Replan, RestOfPlan
from peakopt.runtime.trace import Trace

QUICK = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# two heavy steps that cannot run together, light ones that can run beside either
FAN = Workflow(
    id="fan",
    tasks=(
        Task(id="plan", duration=1.0, demand={"memory_mb": 100.0}),
        Task(id="heavy-a", duration=4.0, demand={"memory_mb": 700.0}, depends_on=("plan",)),
        Task(id="heavy-b", duration=2.0, demand={"memory_mb": 600.0}, depends_on=("plan",)),
        Task(id="light", duration=1.0, demand={"memory_mb": 200.0}, depends_on=("plan",)),
        Task(
            id="merge", duration=1.0, demand={"memory_mb": 100.0}, depends_on=("heavy-a", "heavy-b", "light")
        ),
    ),
)


def judged(trace: Trace) -> None:
    workflow, schedule = trace.realised()
    score = evaluate(workflow, trace.machine, schedule)
    assert score.safe, (score.avoidable_cva, score.dependency_violations)
    assert score.dependency_violations == 0


def plan_ids(governor: Governor, workflow: Workflow) -> list[str]:
    assert governor.plan is not None
    return [workflow.tasks[j].id for j in governor.plan.order.sequence]


def follows(trace: Trace, sequence: list[str]) -> None:
    """No step starts before a step the plan's order puts before it."""
    starts = {s.id: s.start for s in trace.steps if s.start is not None}
    listed = [s for s in sequence if s in starts]
    for before, after in itertools.pairwise(listed):
        assert starts[before] <= starts[after], (before, after, starts)


def follows_but_for_progress(events: list[GovernorEvent], sequence: list[str]) -> None:
    """Steps start in the plan's order, except by the progress rule.

    A step may start before one the plan puts before it only when nothing runs and that one
    is not ready (not asked yet, or waiting for a dependency): the governor then admits the
    oldest ready call whatever the order says, since it cannot know that the other will ask.
    """
    rank = {step: r for r, step in enumerate(sequence)}
    # steps admitted at the same instant start together, whatever order their events come in
    at = {e.lease.id: e.time for e in events if e.kind == "admitted"}
    deps: dict[str, tuple[str, ...]] = {}
    started: set[str] = set()
    ended: set[str] = set()
    running: set[str] = set()
    for event in events:
        lid = event.lease.id
        if event.kind == "requested":
            deps[lid] = event.lease.depends_on
        elif event.kind == "admitted":
            before = sequence[: rank[lid]] if lid in rank else []
            earlier = [s for s in before if s not in started and at.get(s, float("inf")) > event.time]
            ready = [s for s in earlier if s in deps and set(deps[s]) <= ended]
            assert not ready and (not earlier or not running), (lid, earlier, running)
            started.add(lid)
            running.add(lid)
        elif event.kind in ("released", "withdrawn"):
            ended.add(lid)
            running.discard(lid)


def run(
    workflow: Workflow, actual: dict[str, float], policy: object, **options: object
) -> tuple[Governor, list[GovernorEvent]]:
    """Every step of ``workflow`` asked at once on a fake clock, each running its ``actual`` seconds."""
    fake = FakeTime()
    governor = Governor(MACHINE, workflow=workflow, policy=policy, clock=fake.clock, **options)  # type: ignore[arg-type]
    events: list[GovernorEvent] = []
    governor.subscribe(events.append)
    asyncio.run(run_declared(governor, fake, workflow, actual))
    return governor, events


def test_robust_runs_the_declared_steps_safely_in_the_plans_order() -> None:
    actual = {t.id: t.length for t in FAN.tasks}
    governor, events = run(FAN, actual, "robust")
    trace = governor.trace()
    assert trace.policy == "robust" and [s.status for s in trace.steps] == ["ok"] * 5
    judged(trace)
    follows(trace, plan_ids(governor, FAN))
    assert not over(peak_in_use(events, MACHINE), MACHINE)
    # the declared edges are the trace's: merge waited for all three
    merge = next(t for t in trace.workflow.tasks if t.id == "merge")
    assert set(merge.depends_on) == {"heavy-a", "heavy-b", "light"}
    assert trace.makespan < sum(actual.values())  # the light step ran beside a heavy one


def test_a_declared_call_takes_its_steps_demand_and_duration() -> None:
    governor = Governor(MACHINE, workflow=FAN, policy="optimal")
    lease = governor.acquire_blocking("plan")
    assert lease.demand == {"memory_mb": 100.0} and lease.expected == 1.0
    governor.release(lease)
    assert governor.trace().policy == "optimal"


def test_a_plug_in_order_for_the_workflow_is_followed() -> None:
    # a plan that puts the heavy steps the other way round from their ready order
    starts = {"plan": 0.0, "heavy-b": 1.0, "light": 1.0, "heavy-a": 3.0, "merge": 7.0}
    from peakopt.models import Schedule

    schedule = Schedule(workflow="fan", machine="box", starts=starts)
    policy = order_policy(FAN, MACHINE, schedule)
    actual = {t.id: t.length for t in FAN.tasks}
    governor, _ = run(FAN, actual, policy)
    trace = governor.trace()
    judged(trace)
    follows(trace, ["plan", "heavy-b", "light", "heavy-a", "merge"])
    got = {s.id: s.start for s in trace.steps}
    assert got["heavy-b"] == 1.0 and got["heavy-a"] == 3.0


def test_undeclared_calls_beside_declared_ones_are_admitted() -> None:
    fake = FakeTime()
    governor = Governor(MACHINE, workflow=FAN, policy="robust", clock=fake.clock, bypass=2)
    events: list[GovernorEvent] = []
    governor.subscribe(events.append)
    asyncio.run(run_declared(governor, fake, FAN, {t.id: t.length for t in FAN.tasks}, extra=6))
    trace = governor.trace()
    assert len(trace.steps) == 11 and all(s.status == "ok" for s in trace.steps)
    assert sum(s.id.startswith("other") for s in trace.steps) == 6
    judged(trace)
    assert not over(peak_in_use(events, MACHINE), MACHINE)
    counts = passed_over(events)
    assert all(n <= 2 for lid, n in counts.items() if lid.startswith("other")), counts


def test_a_declared_call_waits_for_a_step_not_asked_yet_and_a_skipped_one_frees_it() -> None:
    chain = Workflow(
        id="chain",
        tasks=(
            Task(id="a", duration=1.0, demand={"memory_mb": 10.0}),
            Task(id="b", duration=1.0, demand={"memory_mb": 10.0}, depends_on=("a",)),
            Task(id="c", duration=1.0, demand={"memory_mb": 10.0}, depends_on=("b",)),
        ),
    )
    fake = FakeTime()
    governor = Governor(MACHINE, workflow=chain, policy="robust", clock=fake.clock)
    seen: list[str] = []

    async def call(name: str, wait: float) -> None:
        await fake.sleep(wait)
        async with governor.admit(name):
            seen.append(f"{name}@{fake.now:g}")
            await fake.sleep(1.0)

    async def main() -> None:
        await fake.drive([call("b", 0.0), call("a", 2.0)])

    asyncio.run(main())
    assert seen == ["a@2", "b@3"]  # b asked first, and waited for a, which asked later

    governor = Governor(MACHINE, workflow=chain, clock=FakeTime().clock)
    governor.skip(["a"])
    lease = governor.acquire_blocking("b", timeout=1.0)  # a will never be called: b does not wait
    governor.release(lease)
    with pytest.raises(GovernorError, match="not a step"):
        governor.skip(["zzz"])
    with pytest.raises(GovernorError, match="has been called"):
        governor.skip(["b"])


def test_an_overrun_re_plans_and_the_record_is_in_the_trace() -> None:
    actual = {t.id: t.length for t in FAN.tasks}
    actual["heavy-b"] = 8.0  # declared 2 s: it overruns, the plan changes around it
    governor, events = run(FAN, actual, "robust", replan=Replan(threshold=0.25, grace=0.0, time_limit=2.0))
    trace = governor.trace()
    assert trace.replans, "an overrun must re-plan"
    first = trace.replans[0]
    assert "heavy-b" in first.steps and first.status in ("optimal", "feasible")
    assert first.plan is not None and "merge" in first.plan
    assert "'heavy-b' ran" in first.reason
    assert governor.plan is not None and isinstance(governor.plan.order, RestOfPlan)
    judged(trace)
    assert not over(peak_in_use(events, MACHINE), MACHINE)
    # the trace file reads back (its re-plans name steps of its workflow)
    from peakopt.runtime.trace import trace_json

    assert Trace.model_validate_json(trace_json(trace)).replans == trace.replans


def test_no_overrun_no_re_plan() -> None:
    actual = {t.id: t.length for t in FAN.tasks}
    governor, _ = run(FAN, actual, "robust", replan=Replan(grace=0.0))
    assert governor.trace().replans == ()


def test_a_step_the_plan_puts_later_starts_first_only_by_the_progress_rule() -> None:
    # hypothesis found it: the plan puts s1 first, but s0 asks first with nothing running, so
    # it is admitted (the governor cannot know s1 will ask); s1 then waits for the cpu
    pair = Workflow(
        id="pair",
        tasks=(
            Task(id="s0", duration=1.0, demand={"cpu": 1.0}),
            Task(id="s1", duration=2.0, demand={"cpu": 2.0}),
        ),
    )
    governor, events = run(pair, {"s0": 0.5, "s1": 1.0}, "robust")
    assert plan_ids(governor, pair) == ["s1", "s0"]
    starts = {s.id: s.start for s in governor.trace().steps}
    assert starts == {"s0": 0.0, "s1": 0.5}
    follows_but_for_progress(events, ["s1", "s0"])
    with pytest.raises(AssertionError):
        follows(governor.trace(), ["s1", "s0"])
    # the check is not vacuous: had s1 asked before s0 was admitted, s0 went out of order
    asked = [e for e in events if e.kind == "requested"]
    s0_admitted = next(e for e in events if e.kind == "admitted" and e.lease.id == "s0")
    with pytest.raises(AssertionError):
        follows_but_for_progress([*asked, s0_admitted], ["s1", "s0"])


def test_bad_declarations_are_refused() -> None:
    with pytest.raises(GovernorError, match="needs a declared workflow"):
        Governor(MACHINE, policy="robust")
    with pytest.raises(GovernorError, match="replan needs a declared workflow"):
        Governor(MACHINE, replan=Replan())
    with pytest.raises(GovernorError, match="no-such-method"):
        Governor(MACHINE, workflow=FAN, policy="no-such-method")
    governor = Governor(MACHINE)
    governor.release(governor.acquire_blocking("x", demand={}))
    with pytest.raises(GovernorError, match="before the first call"):
        governor.declare(FAN, policy="robust")
    fresh = Governor(MACHINE)
    fresh.declare(FAN, policy="robust")
    assert fresh.policy_name == "robust"


@QUICK
@given(
    case=declared_workflows(),
    policy=st.sampled_from(["robust", "optimal", "admission", "cap:2"]),
    extra=st.integers(0, 3),
)
def test_random_declared_workflows_hold_every_guarantee(
    case: tuple[Workflow, dict[str, float]], policy: str, extra: int
) -> None:
    workflow, actual = case
    fake = FakeTime()
    governor = Governor(MACHINE, workflow=workflow, policy=policy, clock=fake.clock, bypass=2)
    events: list[GovernorEvent] = []
    governor.subscribe(events.append)
    asyncio.run(run_declared(governor, fake, workflow, actual, extra=extra))  # no deadlock: it ends
    trace = governor.trace()
    assert len(trace.steps) == len(workflow.tasks) + extra
    assert all(s.status == "ok" for s in trace.steps)
    status = governor.status()
    assert status.running == () and status.waiting == ()
    assert not over(peak_in_use(events, MACHINE), MACHINE)
    judged(trace)
    if policy in ("robust", "optimal") and not extra:
        follows_but_for_progress(events, plan_ids(governor, workflow))
        assert trace.makespan <= sum(actual.values()) + 1e-6  # never worse than one at a time
    # the fairness bound: an undeclared call counts every pass; a declared one, under a plan's
    # order, the passes by undeclared calls (the plan ranks the declared ones)
    ordered = policy not in ("admission", "cap:2")

    def counted(older: str, later: str) -> bool:
        return not (ordered and older.startswith("s") and later.startswith("s"))

    counts = passed_over(events, counted)
    assert max(counts.values(), default=0) <= 2, counts


class Newest:
    """A plug-in policy for the workflow that is not a Positional: the newest ready step first."""

    def __call__(self, now, ready, running, free):  # type: ignore[no-untyped-def]
        return list(reversed(ready))


@QUICK
@given(case=declared_workflows(), extra=st.integers(0, 3))
def test_a_plain_plug_in_policy_orders_the_declared_calls(
    case: tuple[Workflow, dict[str, float]], extra: int
) -> None:
    workflow, actual = case
    fake = FakeTime()
    governor = Governor(MACHINE, workflow=workflow, policy=Newest(), clock=fake.clock)
    events: list[GovernorEvent] = []
    governor.subscribe(events.append)
    asyncio.run(run_declared(governor, fake, workflow, actual, extra=extra))
    trace = governor.trace()
    assert trace.policy == "Newest" and len(trace.steps) == len(workflow.tasks) + extra
    assert not over(peak_in_use(events, MACHINE), MACHINE)
    judged(trace)


def test_declared_sync_calls_in_threads_share_the_capacity() -> None:
    governor = Governor(MACHINE, workflow=FAN, policy="robust")
    events: list[GovernorEvent] = []
    governor.subscribe(events.append)

    def step(name: str) -> str:
        with governor.admit_sync(name, timeout=30):
            threading.Event().wait(0.01)
        return name

    async def main() -> list[str]:
        names = ["merge", "light", "heavy-b", "heavy-a", "plan"]  # asked in any order
        return list(await asyncio.gather(*(asyncio.to_thread(step, n) for n in names)))

    assert asyncio.run(main()) == ["merge", "light", "heavy-b", "heavy-a", "plan"]
    trace = governor.trace()
    judged(trace)
    assert not over(peak_in_use(events, MACHINE), MACHINE)
    follows(trace, plan_ids(governor, FAN))


@QUICK
@given(case=declared_workflows(most=5))
def test_random_overruns_re_plan_and_stay_safe(case: tuple[Workflow, dict[str, float]]) -> None:
    workflow, actual = case
    governor, events = run(workflow, actual, "robust", replan=Replan(grace=0.0, time_limit=1.0))
    trace = governor.trace()
    assert all(s.status == "ok" for s in trace.steps)
    assert not over(peak_in_use(events, MACHINE), MACHINE)
    judged(trace)
    assert trace.makespan <= sum(actual.values()) + 1e-6
    assert trace.replans is not None
    for entry in trace.replans:
        assert entry.steps and entry.status in ("optimal", "feasible", "error")


def test_a_declared_call_is_not_starved_by_a_stream_of_undeclared_ones() -> None:
    big = Workflow(id="big", tasks=(Task(id="big", duration=1.0, demand={"memory_mb": 900.0}),))
    fake = FakeTime()
    governor = Governor(MACHINE, workflow=big, policy="robust", clock=fake.clock, bypass=3)
    events: list[GovernorEvent] = []
    governor.subscribe(events.append)

    async def small(k: int) -> None:
        await fake.sleep(0.5 * k)  # one every half second, each running a second: always one runs
        async with governor.admit("small", demand={"memory_mb": 200.0}):
            await fake.sleep(1.0)

    async def heavy() -> None:
        await fake.sleep(0.25)
        async with governor.admit("big"):
            await fake.sleep(1.0)

    asyncio.run(fake.drive([*(small(k) for k in range(20)), heavy()]))
    counts = passed_over(events)
    assert counts.get("big", 0) <= 3, counts
    starts = {s.id: s.start for s in governor.trace().steps}
    assert starts["big"] is not None and starts["big"] < 5.0


def test_a_refused_request_does_not_use_up_its_id() -> None:
    governor = Governor(MACHINE, workflow=FAN)
    with pytest.raises(GovernorError, match="has not been requested"):
        governor.acquire_blocking("plan", depends_on=["nothing"])
    lease = governor.acquire_blocking("plan")
    assert lease.id == "plan" and lease.demand == {"memory_mb": 100.0}
    governor.release(lease)


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=declared_workflows(most=10), extra=st.integers(0, 4))
def test_many_random_declared_workflows_under_robust_with_re_planning(
    case: tuple[Workflow, dict[str, float]], extra: int
) -> None:
    workflow, actual = case
    fake = FakeTime()
    options = Replan(grace=0.0, time_limit=1.0)
    governor = Governor(
        MACHINE, workflow=workflow, policy="robust", replan=options, clock=fake.clock, bypass=2
    )
    events: list[GovernorEvent] = []
    governor.subscribe(events.append)
    asyncio.run(run_declared(governor, fake, workflow, actual, extra=extra))
    trace = governor.trace()
    assert len(trace.steps) == len(workflow.tasks) + extra and all(s.status == "ok" for s in trace.steps)
    assert not over(peak_in_use(events, MACHINE), MACHINE)
    judged(trace)
    if not extra:
        assert trace.makespan <= sum(actual.values()) + 1e-6
