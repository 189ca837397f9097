"""Re-planning latency: a mid-run re-plan of every workflow × machine of ``bundled:default``.

Each case is the moment a controller re-plans: the optimum at nominal durations ran until its
step running at half its makespan overran (``(1 + 0.25) ×`` its duration + 0.1 s, as
:class:`~peakopt.runtime.replan.Replan` decides by default). The steps that started before that
step's planned end ran as planned (those done by now with their planned durations), the overrun
step is assumed to take twice what it has run, everything else is released at now; then
:func:`peakopt.runtime.replan.replan` solves the rest with the default 0.2 s limit. Every
re-plan is checked by the oracle (valid, safe, pins kept). The figures go to ``docs/runtime.md``.
"""

from __future__ import annotations

import statistics
import time

from pytest_benchmark.fixture import BenchmarkFixture

from peakopt.instances import load
from peakopt.models import Machine, SolveResult, Workflow
from peakopt.oracle import broken_pins, evaluate
from peakopt.runtime.replan import Moment, Replan, pins_at, replan
from peakopt.solver import solve

OPTIONS = Replan()


def moment(workflow: Workflow, plan: SolveResult) -> Moment | None:
    """The moment the step running at half the plan's makespan overruns (None: nothing runs then)."""
    assert plan.makespan is not None
    half = plan.makespan / 2
    lengths = {t.id: t.length for t in workflow.tasks}
    running = [s for s, at in plan.starts.items() if at <= half < at + lengths[s] and lengths[s] > 0]
    if not running:
        return None
    late = min(running, key=lambda s: (plan.starts[s], s))
    # rounded: a successor starts at the float sum of its predecessor's start and length
    begun, planned_end = plan.starts[late], round(plan.starts[late] + lengths[late], 9)
    now = begun + OPTIONS.due(lengths[late])
    starts = {s: at for s, at in plan.starts.items() if at < planned_end}
    ends = {s: round(at + lengths[s], 9) for s, at in starts.items() if s != late}
    ends = {s: at for s, at in ends.items() if at <= now}
    running_now = {s: max(lengths[s], now - at) for s, at in starts.items() if s not in ends}
    running_now[late] = 2 * (now - begun)
    return Moment(now, starts, ends, running_now)


def replan_all() -> list[tuple[Workflow, Machine, Moment, float, Workflow, SolveResult]]:
    suite = load("bundled:default")
    cases = []
    for workflow in suite.workflows:
        for machine in suite.machines:
            plan = solve(workflow, machine, time_limit=10, workers=1)
            found = moment(workflow, plan)
            if found is None:
                continue
            began = time.perf_counter()
            rest, result = replan(workflow, machine, found, OPTIONS)
            cases.append((workflow, machine, found, time.perf_counter() - began, rest, result))
    return cases


def test_replan_latency(benchmark: BenchmarkFixture) -> None:
    cases = benchmark.pedantic(replan_all, rounds=1)
    seconds = sorted(c[3] for c in cases)
    for workflow, machine, found, _, rest, result in cases:
        assert result.status in ("optimal", "feasible"), result.message
        assert result.schedule is not None
        _, fixed, release = pins_at(workflow, found)
        assert broken_pins(result.schedule, fixed, release) == []
        score = evaluate(rest, machine, result.schedule)
        assert score.valid and score.safe, score.reasons
    proven = sum(c[5].status == "optimal" for c in cases)
    shortcut = sum(c[5].params["phases"] == ["initial schedule meets the bound"] for c in cases)
    p50, p90 = statistics.median(seconds), seconds[int(0.9 * (len(seconds) - 1))]
    print(
        f"{len(cases)} mid-run re-plans: {proven} optimal ({shortcut} by the schedule around the pins "
        f"meeting the bound); p50 {1000 * p50:.1f} ms, p90 {1000 * p90:.1f} ms, "
        f"mean {1000 * statistics.fmean(seconds):.1f} ms, slowest {1000 * seconds[-1]:.0f} ms"
    )
    assert p50 <= 0.05
