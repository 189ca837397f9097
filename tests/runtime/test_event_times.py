"""Event times compared exactly: the same data in another time unit gives the same verdict.

Steps that end at the same instant (as the oracle's :func:`~peakopt.oracle.base.exact.same_time`
says, on the shortest decimals) are released together, whatever the float sums that reach
that instant: 0.2 + 0.1 is 0.30000000000000004 in floats and 0.3 for the judge. So every online
method, every heuristic and the simulator give the same schedule, scaled, for data written in
seconds, tenths of seconds or milliseconds (issue 22, class 11).
"""

from __future__ import annotations

import asyncio
import time
from fractions import Fraction
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import machines, workflows

from peakopt.models import Machine, Schedule, Segment, Task, Workflow
from peakopt.oracle import Simulation, evaluate, same_time
from peakopt.oracle.base.exact import fraction
from peakopt.runtime import controller
from peakopt.runtime.steps import Step, StepOutcome
from peakopt.runtime.trace import Trace
from peakopt.solver.heuristics import method_names, run
from peakopt.solver.heuristics.online import online_policy, policy_factory

#: The issue's example: b (0.1 s, after a of 0.2 s) and c (0.3 s) end together at 0.3 s; d (7 s,
#: after b) comes before e and f (1 s each, after c) in the workflow's order, so released together
#: d and e start at 0.3 s and f follows e: makespan 7.3. Released apart (c's float end first) e
#: and f take both cores and d waits for them: 8.3.
EXAMPLE = Workflow(
    id="w",
    tasks=(
        Task(id="a", duration=0.2, demand={"cpu": 1}),
        Task(id="b", duration=0.1, demand={"cpu": 1}, depends_on=("a",)),
        Task(id="c", duration=0.3, demand={"cpu": 1}),
        Task(id="d", duration=7, demand={"cpu": 1}, depends_on=("b",)),
        Task(id="e", duration=1, demand={"cpu": 1}, depends_on=("c",)),
        Task(id="f", duration=1, demand={"cpu": 1}, depends_on=("c",)),
    ),
)
MACHINE = Machine(name="m", capacity={"cpu": 2})

#: Methods that release steps at events (the dispatch loop, the parallel SGS).
EVENT_METHODS = ("admission", "admission:strict", "cap:2", "sgs:parallel:lft", "sgs:parallel:fifo")
#: Every built-in but the slow portfolio.
METHODS = [m for m in method_names() if m != "best:thorough"] + ["cap:1", "cap:3", "sampling:5"]
#: Powers of ten the property shifts the decimals by.
SHIFTS = (1, 2, 3, -1, -2)


def shifted(workflow: Workflow, shift: int) -> Workflow:
    """``workflow`` with every duration times ``10**shift``, exactly on its decimals."""
    factor = Fraction(10) ** shift

    def times(value: float) -> float:
        return float(fraction(value) * factor)

    tasks = []
    for task in workflow.tasks:
        if task.profile is None:
            tasks.append(task.model_copy(update={"duration": times(task.length)}))
        else:
            profile = tuple(Segment(duration=times(s.duration), demand=s.demand) for s in task.profile)
            tasks.append(task.model_copy(update={"profile": profile}))
    return workflow.model_copy(update={"tasks": tuple(tasks)})


def makespan(workflow: Workflow, machine: Machine, schedule: Schedule) -> float:
    score = evaluate(workflow, machine, schedule)
    assert score.valid and score.makespan is not None, score.reasons
    return score.makespan


def online(workflow: Workflow, machine: Machine, method: str) -> Schedule:
    simulation = Simulation(workflow, machine, factory=policy_factory(method))
    return simulation.schedule(simulation.run([t.length for t in workflow.tasks]))


def same_schedule(base: Schedule, scaled: Schedule, factor: float, scale: float) -> bool:
    """Whether every start of ``scaled`` is ``factor`` times the same start of ``base`` (the same instant)."""
    return all(
        same_time(scaled.starts[step], float(fraction(start) * fraction(factor)), scale)
        for step, start in base.starts.items()
    )


@pytest.mark.parametrize("method", EVENT_METHODS)
@pytest.mark.parametrize("shift", [0, 1])
def test_the_issue_example_releases_the_steps_that_end_together_together(method: str, shift: int) -> None:
    workflow = shifted(EXAMPLE, shift)
    expected = 7.3 * 10**shift
    assert same_time(makespan(workflow, MACHINE, run(workflow, MACHINE, method)), expected)
    assert same_time(makespan(workflow, MACHINE, online(workflow, MACHINE, method)), expected)


def test_a_realisation_whose_ends_meet_releases_them_together() -> None:
    simulation = Simulation(EXAMPLE, MACHINE, factory=policy_factory("admission"))
    starts = dict(zip(simulation.ids, simulation.run([0.2, 0.1, 0.3, 7.0, 1.0, 1.0]), strict=True))
    assert same_time(starts["d"], 0.3) and same_time(starts["e"], 0.3) and same_time(starts["f"], 1.3)


def grid_workflow(workflow: Workflow) -> Workflow:
    """An integer workflow with its durations in tenths (one decimal: float sums carry rounding)."""
    return shifted(workflow, -1)


def test_forward_backward_picks_the_same_pass_in_another_time_unit() -> None:
    """Found by the property test below: the serial and the parallel pass tied up to float error.

    At 0.1 s units the two forward passes ended 0.6 and 0.6 + 1e-16 apart, at 1 s units exactly
    together, so the improvement kept a different schedule of the same makespan.
    """
    workflow = Workflow(
        id="w",
        tasks=(
            Task(id="t0", duration=0.0, demand={"cpu": 0.0, "memory_mb": 0.0}),
            Task(id="t1", depends_on=("t0",), duration=0.4, demand={"cpu": 0.0, "memory_mb": 1.0}),
            Task(id="t2", depends_on=("t0",), duration=0.1, demand={"memory_mb": 1.0}),
            Task(
                id="t3",
                depends_on=("t0", "t2"),
                profile=(
                    Segment(duration=0.1, demand={"cpu": 1.0, "memory_mb": 1.0}),
                    Segment(duration=0.0, demand={}),
                ),
            ),
            Task(id="t4", profile=(Segment(duration=0.4, demand={"cpu": 1.0}),)),
        ),
    )
    machine = Machine(name="m", capacity={"cpu": 1.0, "memory_mb": 1.0})
    method = "fbi:sgs:serial:random"
    base, other = run(workflow, machine, method), run(shifted(workflow, 1), machine, method)
    assert same_schedule(base, other, 10.0, makespan(shifted(workflow, 1), machine, other))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    workflow=workflows(integer=True, max_tasks=7).map(grid_workflow),
    machine=machines(integer=True),
    shift=st.sampled_from(SHIFTS),
)
def test_every_method_gives_the_same_schedule_in_another_time_unit(
    workflow: Workflow, machine: Machine, shift: int
) -> None:
    scaled = shifted(workflow, shift)
    factor = 10.0**shift
    for method in METHODS:
        for build in (run, online):
            base, other = build(workflow, machine, method), build(scaled, machine, method)
            span = makespan(scaled, machine, other)
            assert same_time(span, makespan(workflow, machine, base) * factor), (method, build.__name__)
            a, b = evaluate(workflow, machine, base), evaluate(scaled, machine, other)
            assert (a.valid, a.safe) == (b.valid, b.safe), (method, build.__name__)
            assert same_schedule(base, other, factor, span), (method, build.__name__, base, other)


class FakeClock:
    """Steps that take their declared time on a fake clock, reported done as asyncio reports them.

    Steps whose ends are within a nanosecond of the earliest pending end finish during one wait
    of the controller (one ``done`` set), with their float ends: 0.30000000000000004 and 0.3.
    """

    def __init__(self, workflow: Workflow) -> None:
        self.now = 0.0
        self.lengths = {t.id: t.length for t in workflow.tasks}
        self.pending: list[tuple[float, asyncio.Future[None]]] = []

    def monotonic(self) -> float:
        return self.now

    async def run_step(
        self, step: Step, *, measure: bool = False, interval: float = 0.1, **keywords: object
    ) -> StepOutcome:
        # the controller's other keywords (the reaper, a usage watch, a memory limit) mean nothing here
        end = self.now + self.lengths[str(step)]
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.pending.append((end, future))
        await future
        return StepOutcome(0, end)

    async def drive(self, run: asyncio.Task[Trace]) -> Trace:
        while not run.done():
            for _ in range(20):  # the controller handles what ended and starts what it admits
                await asyncio.sleep(0)
            if self.pending:
                first = min(end for end, _ in self.pending)
                due = [(end, f) for end, f in self.pending if end - first < 1e-9]
                self.pending = [p for p in self.pending if p not in due]
                self.now = max(end for end, _ in due)
                for _, future in due:
                    future.set_result(None)
        return run.result()


@pytest.mark.parametrize("shift", [0, 1])
def test_the_controller_releases_the_steps_that_end_together_together(
    monkeypatch: pytest.MonkeyPatch, shift: int
) -> None:
    workflow = shifted(EXAMPLE, shift)
    clock = FakeClock(workflow)
    monkeypatch.setattr(controller, "run_step", clock.run_step)
    monkeypatch.setattr(
        controller, "time", SimpleNamespace(monotonic=clock.monotonic, perf_counter=time.perf_counter)
    )
    policy = online_policy("admission", workflow, MACHINE)
    steps: dict[str, Step] = {t.id: t.id for t in workflow.tasks}

    async def main() -> Trace:
        run = asyncio.create_task(controller.Controller(workflow, MACHINE, policy, steps).run())
        return await clock.drive(run)

    trace = asyncio.run(main())
    ends = {r.id: r.end for r in trace.steps}
    starts = {r.id: r.start for r in trace.steps}
    assert ends["b"] is not None and ends["c"] is not None and same_time(ends["b"], ends["c"])
    assert starts["d"] is not None and starts["f"] is not None
    assert same_time(starts["d"], 0.3 * 10**shift) and same_time(starts["f"], 1.3 * 10**shift)
